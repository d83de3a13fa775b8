import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// The live graphile-worker workers (src/engine/queue/graphile-queue.ts): one row per worker id, its
// heartbeat refreshed by the process that runs it. A worker whose heartbeat is stale belongs to a
// process that died; a live worker hands that worker's locked jobs back (graphile-worker's
// force_unlock_workers) instead of leaving them locked for graphile-worker's four hours.
// PostgreSQL only: the embedded SQLite queue has one worker per file and releases its claims at start.
// Heartbeats are the database's now(), so every process compares them on one clock.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was, not as the app types say it is now.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  if (t.dialect !== "postgres") return;
  await sql`
    create table queue_workers (
      worker_id text primary key,
      owner text not null,
      heartbeat_at timestamptz not null default now()
    )`.execute(db);
}
