import type { Kysely } from "kysely";
import type { Database } from "../store/schema.ts";

/**
 * How a transaction's rows are found. Only `triggers` indexes `transaction_id` (it must: a repeated
 * transactionId is refused by that unique index); the rows made from a trigger are reached through
 * it: its notifications by `trigger_id`, their jobs and messages by `notification_id`, all indexes
 * whose keys grow with time and so append. An index on `transaction_id` in each of those tables
 * put each row's entry at a random place (transactionIds are the client's, often UUIDs), and every
 * such page was written to the log whole on every commit.
 *
 * A row made from a trigger has the trigger's environment and transactionId; the subqueries scope by
 * the environment, so a caller that filters on them needs no `environment_id` of its own (and on
 * SQLite must not add one: the planner would then walk the environment's whole time index).
 */

/** Ids of the environment's triggers with any of these transactionIds. */
export function triggersOfTransactions(
  db: Kysely<Database>,
  environmentId: string,
  transactionIds: readonly string[],
) {
  return db
    .selectFrom("triggers")
    .select("triggers.id")
    .where("triggers.environment_id", "=", environmentId)
    .where("triggers.transaction_id", "in", [...transactionIds]);
}

/** Ids of the notifications of the environment's triggers with any of these transactionIds. */
export function notificationsOfTransactions(
  db: Kysely<Database>,
  environmentId: string,
  transactionIds: readonly string[],
) {
  return db
    .selectFrom("notifications")
    .select("notifications.id")
    .where("notifications.trigger_id", "in", triggersOfTransactions(db, environmentId, transactionIds));
}
