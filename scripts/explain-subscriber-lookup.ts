// The read behind GET /v1/subscribers/{subscriberId}, at 1,000 and at 1,000,000 subscribers, on the
// database alone (no HTTP, no other load from this process): its plan, and the time of 20,000
// lookups of random subscribers, one after another. `npm run bench` measures the route under load;
// this shows what the index does, on a machine where the HTTP figures move with everything else.
//
//   npx tsx scripts/explain-subscriber-lookup.ts                 SQLite, and PostgreSQL when one answers
//   SUBSCRIBERS=200000 npx tsx scripts/explain-subscriber-lookup.ts
//
// SQLite works in a temporary file; PostgreSQL in a schema of its own, dropped at the end.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CompiledQuery, type Kysely, sql } from "kysely";
import postgres from "postgres";
import { systemClock } from "../src/clock.ts";
import { createOrganization } from "../src/onboarding/service.ts";
import type { Database } from "../src/store/schema.ts";
import { openStore, postgresAnswers, redactDatabaseUrl, type Store } from "../src/store/store.ts";
import { findSubscriber } from "../src/subscribers/repository.ts";

const BIG = Number(process.env.SUBSCRIBERS ?? 1_000_000);
const SMALL = 1000;
const LOOKUPS = 20_000;
const PG_URL =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** `count` subscribers `sub-1` … in one statement (ids 24 hex characters, as ours). */
async function seed(store: Store, environmentId: string, organizationId: string, count: number) {
  const now = new Date().toISOString();
  const tag = environmentId.slice(-8);
  if (store.backend === "sqlite") {
    await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${count})
      insert into subscribers (id, organization_id, environment_id, subscriber_id, email, created_at, updated_at)
      select ${tag} || printf('%016x', n), ${organizationId}, ${environmentId}, 'sub-' || n,
        'user' || n || '@example.com', ${now}, ${now} from seq`.execute(store.db);
  } else {
    await sql`insert into subscribers (id, organization_id, environment_id, subscriber_id, email, created_at, updated_at)
      select ${tag} || lpad(to_hex(n), 16, '0'), ${organizationId}, ${environmentId}, 'sub-' || n,
        'user' || n || '@example.com', ${now}::timestamptz, ${now}::timestamptz
      from generate_series(1, ${count}::int) as n`.execute(store.db);
    await sql`analyze subscribers`.execute(store.db);
  }
}

async function plan(db: Kysely<Database>, backend: string, environmentId: string) {
  const query = db
    .selectFrom("subscribers")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("subscriber_id", "=", "sub-500")
    .compile();
  const prefix = backend === "sqlite" ? "explain query plan " : "explain (analyze, costs off) ";
  const result = await db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(prefix + query.sql, [...query.parameters]),
  );
  return result.rows.map((r) => String(r.detail ?? r["QUERY PLAN"])).join("\n    ");
}

async function time(store: Store, environmentId: string, count: number) {
  // Warm the cache first, as a running service would be.
  for (let i = 0; i < 2000; i++) {
    await findSubscriber(store.db, environmentId, `sub-${1 + Math.floor(Math.random() * count)}`);
  }
  const started = performance.now();
  for (let i = 0; i < LOOKUPS; i++) {
    const found = await findSubscriber(
      store.db,
      environmentId,
      `sub-${1 + Math.floor(Math.random() * count)}`,
    );
    if (!found) throw new Error("a seeded subscriber was not found");
  }
  return ((performance.now() - started) * 1000) / LOOKUPS;
}

async function run(store: Store) {
  await store.migrate();
  const small = await createOrganization({ db: store.db, clock: systemClock }, "Small");
  const big = await createOrganization({ db: store.db, clock: systemClock }, "Big");
  const smallEnv = small.environments[0]?._id as string;
  const bigEnv = big.environments[0]?._id as string;
  await seed(store, smallEnv, small.organizationId, SMALL);
  const smallUs = await time(store, smallEnv, SMALL);
  const smallPlan = await plan(store.db, store.backend, smallEnv);
  const started = performance.now();
  await seed(store, bigEnv, big.organizationId, BIG);
  const seeded = ((performance.now() - started) / 1000).toFixed(1);
  const bigUs = await time(store, bigEnv, BIG);
  const bigPlan = await plan(store.db, store.backend, bigEnv);
  console.log(
    `${store.backend}: ${LOOKUPS.toLocaleString("en")} lookups of random subscribers, one at a time`,
  );
  console.log(
    `  ${SMALL.toLocaleString("en")} subscribers: ${smallUs.toFixed(1)} µs per lookup\n    ${smallPlan}`,
  );
  console.log(
    `  ${BIG.toLocaleString("en")} subscribers (seeded in ${seeded} s): ${bigUs.toFixed(1)} µs per lookup\n    ${bigPlan}`,
  );
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-explain-"));
const sqlite = await openStore({ dataDir, sqliteBackgroundCheckpoints: false });
try {
  await run(sqlite);
} finally {
  await sqlite.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

if (await postgresAnswers(PG_URL)) {
  const schema = `explain_${process.pid}`;
  const store = await openStore({
    databaseUrl: PG_URL,
    pgSchema: schema,
    pgPoolSize: 1,
    pgStatementTimeoutMs: 600_000,
  });
  try {
    await run(store);
  } finally {
    await store.close();
    const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  }
} else {
  console.log(`PostgreSQL: nothing answers at ${redactDatabaseUrl(PG_URL)}; skipped`);
}
