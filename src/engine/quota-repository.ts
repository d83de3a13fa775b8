import { type Kysely, sql } from "kysely";
import { runPrepared, slot } from "../store/prepared.ts";
import type { Database } from "../store/schema.ts";
import { dialectOf } from "../store/values.ts";

type Db = Kysely<Database>;

/** How many of the environment's jobs are not final: a sum over its few counter rows (migration 0015). */
export async function openJobs(db: Db, environmentId: string): Promise<number> {
  const [row] = await runPrepared<{ open: number | string | bigint | null }>(
    db,
    "quota open jobs",
    () =>
      db
        .selectFrom("quota_open_jobs")
        .select((eb) => eb.fn.sum<number>("open").as("open"))
        .where("environment_id", "=", slot("environmentId")),
    { environmentId },
  );
  return Number(row?.open ?? 0);
}

/**
 * Adds `delta` (negative to release) to the environment's open jobs by hand, beside what the triggers
 * on `jobs` count: a fan-out trigger reserves the jobs it will write at its acceptance and releases
 * them as its batches write them. Written to the connection's own row (PostgreSQL: its backend's pid,
 * as the triggers on `jobs` do; SQLite: row 0), so it waits for no other transaction.
 */
export async function adjustOpenJobs(db: Db, environmentId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  const shard = dialectOf(db) === "sqlite" ? sql`0` : sql`pg_backend_pid()`;
  await sql`
    insert into quota_open_jobs (environment_id, shard, open) values (${environmentId}, ${shard}, ${delta})
    on conflict (environment_id, shard) do update set open = quota_open_jobs.open + excluded.open`.execute(
    db,
  );
}

/**
 * Adds `recipients` to the environment's count for `minute` if the count stays within `limit`, in
 * one statement (a new minute starts the count again); false when it would not, and nothing is
 * added. The row's lock, held to the end of the transaction, makes concurrent triggers of the
 * environment take their turns: the count never passes the limit.
 */
export async function spendRecipients(
  db: Db,
  environmentId: string,
  minute: number,
  recipients: number,
  limit: number,
): Promise<boolean> {
  const rows = await runPrepared<{ recipients: number }>(
    db,
    "quota spend recipients",
    () =>
      db
        .insertInto("quota_recipients")
        .values({
          environment_id: slot("environmentId"),
          minute: slot("minute"),
          recipients: slot("recipients"),
        })
        .onConflict((conflict) =>
          conflict
            .column("environment_id")
            .doUpdateSet({
              recipients: sql`case when quota_recipients.minute = excluded.minute
                then quota_recipients.recipients + excluded.recipients else excluded.recipients end`,
              minute: sql`excluded.minute`,
            })
            .where(
              sql<boolean>`quota_recipients.minute <> excluded.minute
                or quota_recipients.recipients + excluded.recipients <= ${slot("limit")}`,
            ),
        )
        .returning("recipients"),
    { environmentId, minute, recipients, limit },
  );
  return rows.length > 0;
}

/** The recipients the environment's triggers reached in `minute` so far. */
export async function recipientsIn(db: Db, environmentId: string, minute: number): Promise<number> {
  const row = await db
    .selectFrom("quota_recipients")
    .select(["minute", "recipients"])
    .where("environment_id", "=", environmentId)
    .executeTakeFirst();
  return row && Number(row.minute) === minute ? Number(row.recipients) : 0;
}

/**
 * PostgreSQL: folds the open-jobs rows of connections that are gone into the environment's row 0,
 * so that the rows a trigger sums stay about as many as the connections open now. Rows of closed
 * connections are written by nobody, so this waits for no one and no one waits for it (row 0 is
 * written here alone). Returns how many rows it folded.
 */
export async function foldClosedConnections(db: Db): Promise<number> {
  const { rows } = await sql<{ folded: number | string }>`
    with gone as (
      delete from quota_open_jobs
      where shard <> 0 and shard not in (select pid from pg_stat_activity)
      returning environment_id, open
    ), folded as (
      insert into quota_open_jobs (environment_id, shard, open)
      select environment_id, 0, sum(open) from gone group by environment_id
      on conflict (environment_id, shard) do update set open = quota_open_jobs.open + excluded.open
    )
    select count(*) as folded from gone`.execute(db);
  return Number(rows[0]?.folded ?? 0);
}
