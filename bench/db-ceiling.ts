// The database ceiling: the service's own UPDATE ... RETURNING for a status change (compiled from
// the repository's setStatusQuery, so it is the same statement, key guard included), run in a
// tight loop straight through the driver, no HTTP. Spec: the JSON file named by argv[2]; prints
// one JSON line (a Measurement).
import fs from "node:fs";
import SqliteDatabase from "better-sqlite3";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import postgres from "postgres";
import type { Database } from "../src/store/schema.ts";
import { setStatusQuery } from "../src/workflows/repository.ts";
import { Latencies, type Measurement, round } from "./stats.ts";

export interface DbCeilingSpec {
  backend: "sqlite" | "postgres";
  sqliteFile?: string;
  databaseUrl?: string;
  /** PostgreSQL: connections in the pool (the service's PG_POOL_SIZE). */
  poolSize: number;
  /** PostgreSQL: statements in flight at once (the benchmark's connection count). */
  concurrency: number;
  /** SQLite: statements per COMMIT (1: one commit, so one fsync, per statement). */
  batch: number;
  warmupSeconds: number;
  seconds: number;
  environmentId: string;
  keyId: string;
  ids: string[];
  /** Where the on/off alternation stands (the HTTP runs' counter), so every statement changes a row. */
  start: number;
}

const ID = "\u0000id";
const NOW = "\u0000now";

/** The statement as the service sends it, with the workflow id and the time left to fill in. */
function statement(backend: DbCeilingSpec["backend"], spec: DbCeilingSpec, active: boolean) {
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => (backend === "sqlite" ? new SqliteAdapter() : new PostgresAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) =>
        backend === "sqlite" ? new SqliteIntrospector(k) : new PostgresIntrospector(k),
      createQueryCompiler: () =>
        backend === "sqlite" ? new SqliteQueryCompiler() : new PostgresQueryCompiler(),
    },
  });
  const compiled = setStatusQuery(
    db,
    spec.environmentId,
    { id: ID },
    { active, draft: !active },
    NOW,
    spec.keyId,
  ).compile();
  const template = compiled.parameters.map((p) =>
    backend === "sqlite" && typeof p === "boolean" ? (p ? 1 : 0) : p,
  );
  return {
    sql: compiled.sql,
    params: (id: string, now: string) => template.map((p) => (p === ID ? id : p === NOW ? now : p)),
  };
}

function sqliteLoop(spec: DbCeilingSpec): Measurement & { next: number } {
  if (!spec.sqliteFile) throw new Error("sqliteFile is required");
  const raw = new SqliteDatabase(spec.sqliteFile);
  // Every COMMIT on disk before the next, as the service's are before their answer (the service
  // syncs its log off the event loop by default, SQLITE_SYNC; a tight loop has nothing to overlap).
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = FULL");
  raw.pragma("foreign_keys = ON");
  raw.pragma("busy_timeout = 5000");
  const on = statement("sqlite", spec, true);
  const off = statement("sqlite", spec, false);
  const prepared = { on: raw.prepare(on.sql), off: raw.prepare(off.sql) };
  const begin = raw.prepare("BEGIN IMMEDIATE");
  const commit = raw.prepare("COMMIT");
  let n = spec.start;
  const count = spec.ids.length;
  const window = (seconds: number, latencies: Latencies | undefined) => {
    const end = performance.now() + seconds * 1000;
    let ok = 0;
    const started = performance.now();
    while (performance.now() < end) {
      const t0 = performance.now();
      if (spec.batch > 1) begin.run();
      for (let b = 0; b < spec.batch; b++) {
        const i = n++;
        const active = Math.floor(i / count) % 2 === 0;
        const id = spec.ids[i % count] as string;
        const rows = (active ? prepared.on : prepared.off).all(
          ...(active ? on : off).params(id, new Date().toISOString()),
        );
        if (rows.length !== 1) throw new Error(`the UPDATE matched ${rows.length} rows for ${id}`);
      }
      if (spec.batch > 1) commit.run();
      const elapsed = performance.now() - t0;
      // In a batch every statement waits for the one COMMIT: each is as late as the batch.
      for (let b = 0; b < spec.batch; b++) latencies?.record(elapsed);
      ok += spec.batch;
    }
    return { ok, elapsed: (performance.now() - started) / 1000 };
  };
  window(spec.warmupSeconds, undefined);
  const latencies = new Latencies();
  const { ok, elapsed } = window(spec.seconds, latencies);
  raw.close();
  return measurement(ok, elapsed, latencies, n);
}

/** A measured window as the report reads it; `next` continues the on/off alternation. */
function measurement(ok: number, elapsed: number, latencies: Latencies, next: number) {
  return {
    rps: round(ok / elapsed, 0),
    ...latencies.summary(),
    ok,
    failed: 0,
    seconds: round(elapsed),
    next,
  };
}

async function postgresLoop(spec: DbCeilingSpec): Promise<Measurement & { next: number }> {
  if (!spec.databaseUrl) throw new Error("databaseUrl is required");
  const sql = postgres(spec.databaseUrl, { max: spec.poolSize, onnotice: () => {} });
  const on = statement("postgres", spec, true);
  const off = statement("postgres", spec, false);
  let n = spec.start;
  const count = spec.ids.length;
  const window = async (seconds: number, latencies: Latencies | undefined) => {
    const end = performance.now() + seconds * 1000;
    let ok = 0;
    const started = performance.now();
    const worker = async () => {
      while (performance.now() < end) {
        const i = n++;
        const active = Math.floor(i / count) % 2 === 0;
        const shape = active ? on : off;
        const t0 = performance.now();
        const rows = await sql.unsafe(
          shape.sql,
          shape.params(spec.ids[i % count] as string, new Date().toISOString()) as never[],
          {
            prepare: true,
          },
        );
        latencies?.record(performance.now() - t0);
        if (rows.length !== 1) throw new Error(`the UPDATE matched ${rows.length} rows`);
        ok++;
      }
    };
    await Promise.all(Array.from({ length: spec.concurrency }, worker));
    return { ok, elapsed: (performance.now() - started) / 1000 };
  };
  await window(spec.warmupSeconds, undefined);
  const latencies = new Latencies();
  const { ok, elapsed } = await window(spec.seconds, latencies);
  await sql.end({ timeout: 5 });
  return measurement(ok, elapsed, latencies, n);
}

const spec = JSON.parse(fs.readFileSync(process.argv[2] ?? "", "utf8")) as DbCeilingSpec;
const result = spec.backend === "sqlite" ? sqliteLoop(spec) : await postgresLoop(spec);
process.stdout.write(`${JSON.stringify(result)}\n`);
