import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Each environment's triggers are held to quotas (README, "Quotas"), counted without scanning
// anything on a trigger's way:
//
// - quota_recipients: the recipients the environment's triggers reached in the current minute, one row
//   per environment, added to by the accept transaction itself (a conditional upsert: the row lock
//   makes concurrent triggers take their turns, so the quota holds exactly).
// - quota_open_jobs: how many of the environment's jobs are not final (pending, queued, delayed,
//   running). Kept by triggers on `jobs`, so every path that creates, settles or cancels a job counts,
//   with no code path able to forget it. No index on jobs.status (migration 0010 took it out, so a
//   status change touches no index): the count lives beside the table instead, and a trigger reads
//   it as the sum of a few rows. On PostgreSQL each database connection keeps its own row per
//   environment (`shard` is its backend's pid): a transaction only ever writes the row of the
//   connection it runs on, so it never waits for another's, and a lock on the count can never close
//   a deadlock with the job and subscriber rows the engine locks (one shared row per environment did,
//   under concurrent triggers, digests and cancels); the rows of connections that have closed are
//   folded into the environment's row 0 from time to time. The statement-level triggers add up a whole
//   multi-row insert or update at once. SQLite has one writer: one row per environment.

const OPEN = sql`('pending', 'queued', 'delayed', 'running')`;

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("quota_recipients")
    .addColumn("environment_id", "text", (c) => c.primaryKey())
    .addColumn("minute", "integer", (c) => c.notNull())
    .addColumn("recipients", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("quota_open_jobs")
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("shard", "integer", (c) => c.notNull())
    .addColumn("open", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("quota_open_jobs_pk", ["environment_id", "shard"])
    .execute();
  await sql`
    insert into quota_open_jobs (environment_id, shard, open)
    select environment_id, 0, count(*) from jobs where status in ${OPEN} group by environment_id`.execute(db);

  if (t.dialect === "sqlite") {
    await sql`
      create trigger jobs_open_ai after insert on jobs when new.status in ${OPEN} begin
        insert or ignore into quota_open_jobs (environment_id, shard, open) values (new.environment_id, 0, 0);
        update quota_open_jobs set open = open + 1 where environment_id = new.environment_id and shard = 0;
      end`.execute(db);
    await sql`
      create trigger jobs_open_au after update of status on jobs
      when (old.status in ${OPEN}) <> (new.status in ${OPEN}) begin
        insert or ignore into quota_open_jobs (environment_id, shard, open) values (new.environment_id, 0, 0);
        update quota_open_jobs set open = open + (case when new.status in ${OPEN} then 1 else -1 end)
        where environment_id = new.environment_id and shard = 0;
      end`.execute(db);
    return;
  }

  await sql`
    create function quota_jobs_inserted() returns trigger language plpgsql as $$
    begin
      insert into quota_open_jobs (environment_id, shard, open)
      select environment_id, pg_backend_pid(), count(*) from inserted
      where status in ('pending', 'queued', 'delayed', 'running')
      group by 1, 2
      on conflict (environment_id, shard) do update set open = quota_open_jobs.open + excluded.open;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger jobs_open_inserted after insert on jobs referencing new table as inserted
    for each statement execute function quota_jobs_inserted()`.execute(db);
  await sql`
    create function quota_jobs_updated() returns trigger language plpgsql as $$
    begin
      insert into quota_open_jobs (environment_id, shard, open)
      select n.environment_id, pg_backend_pid(),
        sum(case when n.status in ('pending', 'queued', 'delayed', 'running') then 1 else -1 end)
      from before_update o join after_update n on n.id = o.id
      where (o.status in ('pending', 'queued', 'delayed', 'running'))
        <> (n.status in ('pending', 'queued', 'delayed', 'running'))
      group by 1, 2
      on conflict (environment_id, shard) do update set open = quota_open_jobs.open + excluded.open;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger jobs_open_updated after update on jobs
    referencing old table as before_update new table as after_update
    for each statement execute function quota_jobs_updated()`.execute(db);
}
