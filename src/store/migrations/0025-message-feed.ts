import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// The feed of an in-app message (Novu's `_feedId`): the feed its step named when it was written,
// '' for none (and for every message written before). The widget's feed filters a subscriber's
// messages by it, among the rows `messages_feed` already finds by subscriber and channel: no index.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, _t: ColumnTypes): Promise<void> {
  await db.schema
    .alterTable("messages")
    .addColumn("feed_id", "text", (c) => c.notNull().defaultTo(""))
    .execute();
}
