import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// A transaction's notifications, jobs and messages are found through its trigger (triggers_transaction,
// unique, stays): notifications by trigger_id (notifications_recipient), jobs and messages by
// notification_id (jobs_notification, and messages_notification added here). The three indexes on
// (environment_id, transaction_id) go: transactionIds are the client's, often random, so each of
// them put every new row's entry on a page of its own, written to the log whole at each commit,
// while ids that grow with time append. On a copy of the schema holding 100,000 triggers, a SQLite
// commit of 9 triggers wrote 102 log pages with them and 68 without.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, _t: ColumnTypes): Promise<void> {
  await db.schema.createIndex("messages_notification").on("messages").column("notification_id").execute();
  await db.schema.dropIndex("notifications_transaction").execute();
  await db.schema.dropIndex("jobs_transaction").execute();
  await db.schema.dropIndex("messages_transaction").execute();
}
