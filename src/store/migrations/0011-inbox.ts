import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Novu's current inbox (docs/engine.md, "The inbox"). A message gains what that inbox shows and
// changes: archived (and when), snoozed until a moment, when it was first seen, every moment it was
// delivered (a snoozed message is delivered again when it wakes), the workflow's tags and severity
// as they were when it was written, the in-app step's rendered `data` and avatar. The action buttons
// and the action taken stay in `cta` (`cta.action.buttons`, `cta.action.status`/`result`), as Novu
// keeps them. A workflow gains its severity.
//
// The feed and every count read one subscriber's in-app messages, newest first, filtered by these
// flags: `messages_inbox` holds the order and the flags, so the filters are decided in the index
// (PostgreSQL answers a count from it alone). It begins as `messages_feed` did, which it replaces.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .alterTable("workflows")
    .addColumn("severity", "text", (c) => c.notNull().defaultTo("none"))
    .execute();

  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  const messages = () => db.schema.alterTable("messages");
  await messages()
    .addColumn("archived", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .execute();
  await messages().addColumn("archived_at", t.timestamp).execute();
  await messages().addColumn("snoozed_until", t.timestamp).execute();
  await messages().addColumn("first_seen_at", t.timestamp).execute();
  // JSON arrays and objects as text, as every JSON column.
  await messages()
    .addColumn("delivered_at", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();
  await messages()
    .addColumn("tags", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();
  await messages()
    .addColumn("severity", "text", (c) => c.notNull().defaultTo("none"))
    .execute();
  await messages()
    .addColumn("data", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  await messages()
    .addColumn("avatar", "text", (c) => c.notNull().defaultTo(""))
    .execute();

  await db.schema.dropIndex("messages_feed").execute();
  await db.schema
    .createIndex("messages_inbox")
    .on("messages")
    .columns([
      "subscriber_ref",
      "channel",
      "created_at",
      "id",
      "archived",
      "read",
      "seen",
      "severity",
      "snoozed_until",
    ])
    .execute();
}
