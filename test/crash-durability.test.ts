// Proof 1 (issue 4): a write acknowledged with a 2xx survives the process being killed (SIGKILL)
// mid-load, and the database passes its integrity check afterwards. A real server process, on each
// backend, killed and restarted three times on the same data.
import assert from "node:assert/strict";
import { test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import postgres from "postgres";
import { poll } from "./poll.ts";
import {
  call,
  forEachProcessBackend,
  type ProcessDatabase,
  type ServerProcess,
  seedOrganization,
  stopServer,
} from "./processes.ts";

// Two kills: the second lands on a database the first restart recovered, which is what a third
// would check again.
const CYCLES = 2;
const WORKFLOWS = 6;
const GROUP_WRITERS = 6;

interface WorkflowState {
  id: string;
  /** The state of the last acknowledged change. */
  acked: boolean;
  /** The state a change in flight (sent, no answer) would leave; it may or may not have committed. */
  pending?: boolean;
}

async function integrity(db: ProcessDatabase): Promise<string> {
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.location, { readonly: true });
    try {
      const check = raw.pragma("integrity_check") as { integrity_check: string }[];
      const fks = raw.pragma("foreign_key_check") as unknown[];
      assert.deepEqual(check, [{ integrity_check: "ok" }], "SQLite integrity_check");
      assert.deepEqual(fks, [], "SQLite foreign_key_check");
      return "SQLite pragma integrity_check: ok; foreign_key_check: no violations";
    } finally {
      raw.close();
    }
  }
  const sql = postgres(db.location, { max: 1, onnotice: () => {} });
  try {
    await sql`create extension if not exists amcheck`;
    const indexes = await sql<{ name: string }[]>`
      select format('%I.%I', n.nspname, c.relname) as name from pg_index i
      join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam
      join pg_namespace n on n.oid = c.relnamespace
      where a.amname = 'btree' and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')`;
    // Every B-tree index is structurally sound and holds exactly the heap's rows (heapallindexed).
    for (const { name } of indexes) await sql`select bt_index_check(${name}::regclass, true)`;
    // Every row's references resolve (the schema's foreign keys, checked again by hand).
    const [orphans] = await sql<{ n: number }[]>`
      select count(*)::int as n from workflows w
      left join notification_groups g on g.id = w.notification_group_id where g.id is null`;
    assert.equal(orphans?.n, 0, "workflows pointing at no group");
    return `PostgreSQL amcheck bt_index_check(heapallindexed) on ${indexes.length} indexes: ok; no orphaned rows`;
  } finally {
    await sql.end();
  }
}

forEachProcessBackend("crash durability", (suite) => {
  const backend = suite.backend;
  test(`every acknowledged write survives SIGKILL mid-load, ${CYCLES} times; the database checks clean`, async () => {
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    const env = { ...db.env, RATE_LIMIT_RPS: "0" };
    let server = await suite.start(env);
    const key = seed.apiKey;

    const workflows: WorkflowState[] = [];
    for (let i = 0; i < WORKFLOWS; i++) {
      const res = await call(server, "POST", "/v1/workflows", key, {
        name: `Crash workflow ${i}`,
        notificationGroupId: seed.generalGroupId,
        steps: [{ template: { type: "in_app", content: "Hello" } }],
      });
      assert.equal(res.status, 201, res.text);
      workflows.push({ id: res.json().data._id, acked: res.json().data.active });
    }
    const groups = new Map<string, string>(); // id -> name, every acknowledged creation
    const pendingGroups = new Set<string>(); // names sent without an answer
    const unexpected: string[] = [];
    let totalAcked = 0;

    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const live: ServerProcess = server;
      let acked = 0;
      let killed = false;
      const target = 60 + Math.floor(Math.random() * 120);

      const statusWriter = async (w: WorkflowState) => {
        while (!killed) {
          const next = !w.acked;
          w.pending = next;
          let res: Awaited<ReturnType<typeof call>>;
          try {
            res = await call(live, "PUT", `/v1/workflows/${w.id}/status`, key, { active: next });
          } catch {
            return; // the process is gone; the change may or may not have committed
          }
          if (res.status !== 200) {
            unexpected.push(`PUT status: ${res.status} ${res.text}`);
            return;
          }
          assert.equal(res.json().data.active, next);
          w.acked = next;
          w.pending = undefined;
          acked++;
        }
      };
      const groupWriter = async (g: number) => {
        for (let n = 0; !killed; n++) {
          const name = `Crash group ${cycle}-${g}-${n}`;
          pendingGroups.add(name);
          let res: Awaited<ReturnType<typeof call>>;
          try {
            res = await call(live, "POST", "/v1/notification-groups", key, { name });
          } catch {
            return;
          }
          if (res.status !== 201) {
            unexpected.push(`POST group: ${res.status} ${res.text}`);
            return;
          }
          groups.set(res.json().data._id, name);
          pendingGroups.delete(name);
          acked++;
        }
      };
      const writers = [
        ...workflows.map(statusWriter),
        ...Array.from({ length: GROUP_WRITERS }, (_, g) => groupWriter(g)),
      ];
      // Kill once `target` writes were acknowledged (bounded: 60 s at most, then kill all the same).
      await poll(
        () => acked,
        (n) => n >= target || unexpected.length > 0,
        {
          what: `${target} acknowledged writes`,
          limitMs: 60_000,
          everyMs: 2,
        },
      ).catch(() => {});
      live.child.kill("SIGKILL");
      killed = true;
      const exit: { signal: NodeJS.Signals | null } = await live.exited;
      await Promise.all(writers);
      assert.deepEqual(unexpected, [], "every request before the kill succeeded");
      assert.equal(exit.signal, "SIGKILL");
      totalAcked += acked;

      server = await suite.start(env);
      // Every acknowledged status change is there (or the one in flight, which may have committed).
      let inFlightCommitted = 0;
      for (const w of workflows) {
        const res = await call(server, "GET", `/v1/workflows/${w.id}`, key);
        assert.equal(res.status, 200, res.text);
        const { active, draft } = res.json().data;
        assert.equal(draft, !active, "draft follows active");
        if (active !== w.acked) {
          assert.equal(active, w.pending, `workflow ${w.id}: acknowledged ${w.acked}, found ${active}`);
          inFlightCommitted++;
        }
        w.acked = active;
        w.pending = undefined;
      }
      // Every acknowledged group is there, once; a group in flight at the kill is there at most once.
      const list = await call(server, "GET", "/v1/notification-groups", key);
      assert.equal(list.status, 200, list.text);
      const found = new Map<string, string>(
        list.json().data.map((g: { _id: string; name: string }) => [g._id, g.name]),
      );
      for (const [id, name] of groups) assert.equal(found.get(id), name, `acknowledged group ${name} lost`);
      for (const [id, name] of found) {
        if (groups.has(id) || name === "General") continue;
        assert.ok(pendingGroups.has(name), `a group nobody created: ${name}`);
        groups.set(id, name);
        pendingGroups.delete(name);
        inFlightCommitted++;
      }
      assert.equal(found.size, groups.size + 1, "no duplicates");
      pendingGroups.clear();
      console.log(
        `[${backend}] crash ${cycle}: SIGKILL after ${acked} acknowledged writes; after restart all ` +
          `${WORKFLOWS} workflows and ${groups.size} groups match (${inFlightCommitted} unacknowledged in-flight writes had committed)`,
      );
    }
    const stopped = await stopServer(server);
    assert.equal(stopped.code, 0, "a clean stop after the crashes");
    const report = await integrity(db);
    console.log(
      `[${backend}] crash durability: ${totalAcked} acknowledged writes over ${CYCLES} SIGKILLs, 0 lost; ${report}`,
    );
  });
});
