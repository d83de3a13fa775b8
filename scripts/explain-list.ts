// Seeds 100,000 workflows into one environment and prints the query plans of the list statements
// (GET /v1/workflows, with and without `query`) on SQLite and on PostgreSQL, so anyone can check
// that a page and a search stay index-backed at that size.
//
//   npx tsx scripts/explain-list.ts                     SQLite, and PostgreSQL when one answers
//   DATABASE_URL=postgres://... npx tsx scripts/explain-list.ts
//   WORKFLOWS=20000 npx tsx scripts/explain-list.ts     another size
//
// SQLite works in a temporary file; PostgreSQL in a schema of its own, dropped at the end.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CompiledQuery, type Insertable, type Kysely } from "kysely";
import postgres from "postgres";
import { systemClock } from "../src/clock.ts";
import { newObjectId } from "../src/ids.ts";
import { createOrganization } from "../src/onboarding/service.ts";
import type { Database, WorkflowsTable } from "../src/store/schema.ts";
import { openStore, postgresAnswers, redactDatabaseUrl, type Store } from "../src/store/store.ts";
import { writeJson } from "../src/store/values.ts";
import { type ListQuery, listWorkflowQueries } from "../src/workflows/repository.ts";

const COUNT = Number(process.env.WORKFLOWS ?? 100_000);
const PG_URL =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const WORDS = [
  "order",
  "invoice",
  "welcome",
  "password",
  "digest",
  "alert",
  "receipt",
  "shipping",
  "comment",
  "trial",
];

async function seed(db: Kysely<Database>): Promise<string> {
  const org = await createOrganization({ db, clock: systemClock }, "Explain");
  const env = org.environments.find((e) => e.name === "Development");
  if (!env) throw new Error("no Development environment");
  const group = await db
    .selectFrom("notification_groups")
    .select("id")
    .where("environment_id", "=", env._id)
    .executeTakeFirstOrThrow();
  const steps = writeJson([]);
  const start = Date.parse("2025-01-01T00:00:00Z");
  const BATCH = 1000;
  for (let from = 0; from < COUNT; from += BATCH) {
    const rows: Insertable<WorkflowsTable>[] = [];
    for (let i = from; i < Math.min(from + BATCH, COUNT); i++) {
      const word = WORDS[i % WORDS.length];
      const name = `${word} ${i} ${randomBytes(3).toString("hex")}`;
      const at = new Date(start + i * 1000).toISOString();
      rows.push({
        id: newObjectId(start + i * 1000),
        organization_id: org.organizationId,
        environment_id: env._id,
        name,
        description: "",
        identifier: name.replace(/ /g, "-"),
        active: false,
        draft: true,
        critical: false,
        tags: "[]",
        steps,
        triggers: "[]",
        preference_settings: "{}",
        data: "{}",
        workflow_integration_status: "{}",
        notification_group_id: group.id,
        parent_id: "",
        creator_id: "explain",
        deleted: i % 50 === 0, // a few deleted ones, as in real life
        deleted_at: null,
        deleted_by: "",
        created_at: at,
        updated_at: at,
      });
    }
    await db.transaction().execute((tx) => tx.insertInto("workflows").values(rows).execute());
  }
  return env._id;
}

const CASES: [string, ListQuery][] = [
  ["first page, no query", { offset: 0, limit: 10, query: "" }],
  ["page 500 (offset 5000), no query", { offset: 5000, limit: 10, query: "" }],
  ["search, selective (one workflow)", { offset: 0, limit: 10, query: "4242 " }],
  ["search, common word (10% of rows)", { offset: 0, limit: 10, query: "INVOICE" }],
  ["search, two characters (below the trigram size)", { offset: 0, limit: 10, query: "99" }],
];

async function explain(store: Store, environmentId: string) {
  const db = store.db;
  for (const [label, list] of CASES) {
    const { page, count } = listWorkflowQueries(db, environmentId, list);
    for (const [part, query] of [
      ["page", page],
      ["count", count],
    ] as const) {
      const compiled = query.compile();
      const prefix = store.backend === "sqlite" ? "explain query plan " : "explain (analyze, costs off) ";
      const started = performance.now();
      const result = await db.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]),
      );
      const explained = (performance.now() - started).toFixed(1);
      const ran = performance.now();
      const answer = await db.executeQuery(compiled);
      const ms = (performance.now() - ran).toFixed(1);
      const rows =
        part === "count"
          ? `count ${String(Object.values(answer.rows[0] ?? {})[0])}`
          : `${answer.rows.length} rows`;
      console.log(
        `\n--- ${store.backend}: ${label} — ${part}: ${rows} in ${ms} ms (explain ${explained} ms)`,
      );
      for (const row of result.rows) {
        if (store.backend === "sqlite")
          console.log(`${"  ".repeat(depthOf(result.rows, row))}${String(row.detail)}`);
        else console.log(String(row["QUERY PLAN"]));
      }
    }
  }
}

/** SQLite's plan rows form a tree through id/parent. */
function depthOf(rows: Record<string, unknown>[], row: Record<string, unknown>): number {
  let depth = 0;
  let parent = row.parent;
  while (parent && depth < 20) {
    parent = rows.find((r) => r.id === parent)?.parent;
    depth++;
  }
  return depth;
}

async function run(backend: "sqlite" | "postgres") {
  let store: Store;
  let cleanup: () => Promise<void>;
  if (backend === "sqlite") {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-explain-"));
    store = await openStore({ dataDir });
    cleanup = async () => fs.rmSync(dataDir, { recursive: true, force: true });
  } else {
    const schema = `explain_${randomBytes(4).toString("hex")}`;
    store = await openStore({ databaseUrl: PG_URL, pgSchema: schema });
    cleanup = async () => {
      const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    };
  }
  try {
    await store.migrate();
    const started = performance.now();
    const environmentId = await seed(store.db);
    console.log(
      `\n=== ${backend}: ${COUNT} workflows seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    // Statistics (and on PostgreSQL the visibility map, for index-only scans), as autovacuum would.
    await store.db.executeQuery(
      CompiledQuery.raw(store.backend === "sqlite" ? "analyze" : "vacuum analyze workflows"),
    );
    await explain(store, environmentId);
  } finally {
    await store.close();
    await cleanup();
  }
}

await run("sqlite");
if (await postgresAnswers(PG_URL)) await run("postgres");
else console.log(`\n(PostgreSQL skipped: nothing answers at ${redactDatabaseUrl(PG_URL)})`);
