import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// jobs_transaction indexed (environment_id, transaction_id, status): every change of a job's status
// (at least two per job: claimed, then settled) rewrote its entry, and on PostgreSQL an indexed
// column changing rules out a heap-only update, so every index of the row got a new entry too.
// Without `status`, finding a transaction's jobs is the same seek (a transaction has a few jobs,
// their status checked on the rows), and a status change touches no index.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, _t: ColumnTypes): Promise<void> {
  await db.schema.dropIndex("jobs_transaction").execute();
  await db.schema
    .createIndex("jobs_transaction")
    .on("jobs")
    .columns(["environment_id", "transaction_id"])
    .execute();
}
