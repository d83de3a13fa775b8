// How many pages of SQLite's write-ahead log one commit of triggers writes, and to which table or
// index they belong. Every page a commit touches is written to the log whole, so a row whose index
// entry lands at a random place costs a page of its own, while entries that grow with time share
// the last page. Runs the service's own migrations into a scratch database, writes a history of
// triggers (one in-app message each: a trigger, a notification, a job, a message, two execution
// details), then commits of `BATCH` triggers, and reads the log's frames back.
//
//   node --import tsx bench/log-pages.ts
//
// Prints, for each layout side by side: log pages per commit, the commit's time and the whole
// transaction's, and the pages per commit of each table and index. The layouts: ids with random low
// bytes or consecutive (src/ids.ts), with or without the (environment_id, transaction_id) indexes of
// notifications, jobs and messages (the layout before migration 0026, which dropped them and added
// messages_notification), and transactionIds random (a client's own UUIDs, as every client that sent
// none got before) or generated (the service's own for a trigger that names none: src/ids.ts,
// newTransactionId, with the time advancing a millisecond every two triggers).
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { newObjectId, newTransactionId } from "../src/ids.ts";
import { openStore } from "../src/store/store.ts";

const HISTORY = Number(process.env.LOG_PAGES_HISTORY ?? 100_000);
const BATCH = Number(process.env.LOG_PAGES_BATCH ?? 9);
const COMMITS = Number(process.env.LOG_PAGES_COMMITS ?? 600);
const SUBSCRIBERS = 10_000;
const FRAME = 24 + 4096;

interface Layout {
  name: string;
  ids: "random" | "consecutive";
  transactionIndexes: boolean;
  transactionIds: "random" | "generated";
}

const LAYOUTS: Layout[] = [
  {
    name: "random ids, transaction indexes",
    ids: "random",
    transactionIndexes: true,
    transactionIds: "random",
  },
  {
    name: "consecutive ids, transaction indexes",
    ids: "consecutive",
    transactionIndexes: true,
    transactionIds: "random",
  },
  {
    name: "consecutive ids, no transaction indexes, random transactionIds (a client's own)",
    ids: "consecutive",
    transactionIndexes: false,
    transactionIds: "random",
  },
  {
    name: "consecutive ids, no transaction indexes, generated transactionIds (now, when a client sends none)",
    ids: "consecutive",
    transactionIndexes: false,
    transactionIds: "generated",
  },
];

const TABLES = ["triggers", "notifications", "jobs", "messages", "execution_details"] as const;

async function schemaFile(dir: string): Promise<string> {
  const store = await openStore({ dataDir: dir, sqliteBackgroundCheckpoints: false });
  await store.migrate();
  await store.close();
  return path.join(dir, "tidings.db");
}

function measure(template: string, layout: Layout) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-log-pages-"));
  const file = path.join(dir, "t.db");
  fs.copyFileSync(template, file);
  const db = new SqliteDatabase(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = OFF");
    db.pragma("wal_autocheckpoint = 0");
    if (layout.transactionIndexes) {
      db.exec(`create index if not exists notifications_transaction on notifications (environment_id, transaction_id);
               create index if not exists jobs_transaction on jobs (environment_id, transaction_id);
               create index if not exists messages_transaction on messages (environment_id, transaction_id);
               drop index messages_notification;`);
    }
    const columns = Object.fromEntries(
      TABLES.map((t) => [
        t,
        db.prepare(`select name, type from pragma_table_info('${t}')`).all() as {
          name: string;
          type: string;
        }[],
      ]),
    );
    const inserts = Object.fromEntries(
      TABLES.map((t) => [
        t,
        db.prepare(
          `insert into ${t} (${columns[t]?.map((c) => `"${c.name}"`).join(", ")}) values (${columns[t]?.map(() => "?").join(", ")})`,
        ),
      ]),
    );
    let seconds = 0x69000000;
    // Consecutive: the service's own ids (src/ids.ts); random: the layout before, eight random bytes.
    const id = () =>
      layout.ids === "random"
        ? seconds.toString(16) + randomBytes(8).toString("hex")
        : newObjectId(seconds * 1000);
    const subscribers = Array.from({ length: SUBSCRIBERS }, id);
    const text = (name: string) =>
      ["content", "payload", "request", "workflow", "step"].includes(name) ? "x".repeat(200) : "x".repeat(12);
    const row = (table: string, values: Record<string, string>) =>
      (columns[table] ?? []).map((c) =>
        c.name in values
          ? values[c.name]
          : c.name === "created_at" || c.name === "updated_at"
            ? new Date(seconds * 1000).toISOString()
            : c.type.toLowerCase() === "integer"
              ? 0
              : text(c.name),
      );
    let n = 0;
    const trigger = () => {
      const [t, no, j, m, d1, d2] = [id(), id(), id(), id(), id(), id()];
      const common = {
        environment_id: "env",
        subscriber_ref: subscribers[n++ % SUBSCRIBERS] as string,
        transaction_id:
          layout.transactionIds === "random"
            ? randomUUID()
            : newTransactionId(seconds * 1000 + Math.floor((n % 2000) / 2)),
      };
      inserts.triggers?.run(row("triggers", { ...common, id: t }));
      inserts.notifications?.run(row("notifications", { ...common, id: no, trigger_id: t }));
      inserts.jobs?.run(row("jobs", { ...common, id: j, notification_id: no, status: "completed" }));
      inserts.messages?.run(row("messages", { ...common, id: m, notification_id: no, job_id: j }));
      for (const d of [d1, d2])
        inserts.execution_details?.run(
          row("execution_details", { ...common, id: d, job_id: j, notification_id: no }),
        );
    };
    db.transaction(() => {
      for (let i = 0; i < HISTORY; i++) {
        if (i % 2000 === 0) seconds++;
        trigger();
      }
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    let commitNs = 0n;
    let allNs = 0n;
    for (let c = 0; c < COMMITS; c++) {
      if (c % 200 === 0) seconds++;
      const began = process.hrtime.bigint();
      db.exec("begin immediate");
      for (let i = 0; i < BATCH; i++) trigger();
      const wrote = process.hrtime.bigint();
      db.exec("commit");
      const ended = process.hrtime.bigint();
      commitNs += ended - wrote;
      allNs += ended - began;
    }
    const log = fs.readFileSync(`${file}-wal`);
    const owner = new Map(
      (db.prepare("select pageno, name from dbstat").all() as { pageno: number; name: string }[]).map((r) => [
        r.pageno,
        r.name,
      ]),
    );
    const byOwner = new Map<string, number>();
    for (let at = 32; at + FRAME <= log.length; at += FRAME) {
      const name = owner.get(log.readUInt32BE(at)) ?? "(free)";
      byOwner.set(name, (byOwner.get(name) ?? 0) + 1);
    }
    return {
      pages: (log.length - 32) / FRAME / COMMITS,
      commitUs: Number(commitNs / BigInt(COMMITS)) / 1000,
      transactionUs: Number(allNs / BigInt(COMMITS)) / 1000,
      byOwner: new Map([...byOwner].map(([k, v]) => [k, v / COMMITS])),
    };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-log-schema-"));
  try {
    const template = await schemaFile(scratch);
    console.log(
      `${HISTORY.toLocaleString("en")} triggers of history, then ${COMMITS} commits of ${BATCH} triggers each`,
    );
    const results = LAYOUTS.map((layout) => ({ layout, ...measure(template, layout) }));
    console.log(`| layout | log pages per commit | commit µs | transaction µs |`);
    console.log(`|---|--:|--:|--:|`);
    for (const r of results)
      console.log(
        `| ${r.layout.name} | ${r.pages.toFixed(1)} | ${r.commitUs.toFixed(0)} | ${r.transactionUs.toFixed(0)} |`,
      );
    const owners = [...new Set(results.flatMap((r) => [...r.byOwner.keys()]))].sort(
      (a, b) => (results[0]?.byOwner.get(b) ?? 0) - (results[0]?.byOwner.get(a) ?? 0),
    );
    console.log(`\n| pages per commit | ${results.map((_, i) => `layout ${i + 1}`).join(" | ")} |`);
    console.log(`|---|${results.map(() => "--:").join("|")}|`);
    for (const owner of owners)
      console.log(`| ${owner} | ${results.map((r) => (r.byOwner.get(owner) ?? 0).toFixed(1)).join(" | ")} |`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
