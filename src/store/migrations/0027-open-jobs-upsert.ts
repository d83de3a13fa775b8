import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// SQLite's count of open jobs (0015-quotas) is kept by row triggers on `jobs`, which fire for every
// job created open and every job that opens or closes: a due delay closes two. Each firing ran two
// statements on the environment's count row (`insert or ignore`, then `update`); it now runs one
// upsert. Measured on a copy of a database holding 40,000 jobs, an update that closes jobs, 32 a
// statement: 34–44 µs a job with the two statements, 29–30 µs with the upsert, 15–17 µs with no
// trigger. The counts are the same. PostgreSQL's statement triggers already upsert.

const OPEN = sql`('pending', 'queued', 'delayed', 'running')`;

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  if (t.dialect !== "sqlite") return;
  await sql`drop trigger jobs_open_ai`.execute(db);
  await sql`drop trigger jobs_open_au`.execute(db);
  await sql`
    create trigger jobs_open_ai after insert on jobs when new.status in ${OPEN} begin
      insert into quota_open_jobs (environment_id, shard, open) values (new.environment_id, 0, 1)
      on conflict (environment_id, shard) do update set open = open + 1;
    end`.execute(db);
  await sql`
    create trigger jobs_open_au after update of status on jobs
    when (old.status in ${OPEN}) <> (new.status in ${OPEN}) begin
      insert into quota_open_jobs (environment_id, shard, open)
      values (new.environment_id, 0, case when new.status in ${OPEN} then 1 else -1 end)
      on conflict (environment_id, shard) do update set open = open + excluded.open;
    end`.execute(db);
}
