import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// What Novu's /v2 topics keep besides (docs/engine.md, "Subscribers, topics and preferences"): a
// topic's own `data`, and when a subscription last changed (its name or its preferences); and the
// order a topic's subscriptions are listed in, a page at a time (oldest or newest first), read from
// an index rather than sorted, and a subscription found by its id (a page's cursor).

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  // JSON text, as subscribers' data.
  await db.schema
    .alterTable("topics")
    .addColumn("data", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  // NULL for subscriptions that have not changed since they were made (their created_at stands).
  await db.schema.alterTable("topic_subscribers").addColumn("updated_at", t.timestamp).execute();
  await db.schema
    .createIndex("topic_subscribers_topic_created")
    .on("topic_subscribers")
    .columns(["topic_id", "created_at", "id"])
    .execute();
  await db.schema.createIndex("topic_subscribers_id").on("topic_subscribers").column("id").execute();
}
