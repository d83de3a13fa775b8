import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// The embedded job queue (src/engine/queue/sqlite-queue.ts): one row per task, in the same file as
// everything else, so a task is added in the transaction that acknowledges its trigger. SQLite only:
// on PostgreSQL the queue is graphile-worker, whose installer creates its own schema when the queue
// opens, so this migration does nothing there.
//
// Times are epoch milliseconds of the service's clock (integers compare and index cheaply), not the
// ISO text of the API tables: no row of this table is ever shown to a client.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was, not as the app types say it is now.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  if (t.dialect !== "sqlite") return;
  // AUTOINCREMENT: a task id is never reused, even after the newest task is deleted, so an id the
  // engine or a log line kept cannot later name another task.
  await sql`
    create table queue_tasks (
      id integer primary key autoincrement,
      task text not null,
      payload text not null,
      run_at integer not null,
      key text unique,
      attempts integer not null default 0,
      max_attempts integer not null,
      last_error text,
      claimed_at integer,
      created_at integer not null
    )`.execute(db);
  // What the worker asks for: unclaimed tasks, soonest first.
  await sql`create index queue_tasks_due on queue_tasks (run_at, id) where claimed_at is null`.execute(db);
}
