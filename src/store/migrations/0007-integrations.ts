import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Integrations (docs/engine.md, "Delivery"): an environment's provider configurations. `credentials` is the
// provider's settings as JSON, sealed with AES-256-GCM (never plaintext in the database); a row is
// deleted for good when the integration is. `is_primary` ("primary" is a reserved word) marks the
// one set-primary chose for its channel.
//
// Messages: a chat step delivers one message per provider the subscriber has a webhook for, so a
// message is now unique per job and provider (an in-app or email message has one provider per job,
// so nothing changes for them). SQLite cannot drop a column's UNIQUE constraint: the table is
// rebuilt with the columns of migration 0005, its rows copied as they are.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was, not as the app types say it is now.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("integrations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("provider_id", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("identifier", "text", (c) => c.notNull())
    .addColumn("credentials", "text", (c) => c.notNull())
    .addColumn("active", t.boolean, (c) => c.notNull())
    .addColumn("is_primary", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("conditions", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("integrations_identifier")
    .on("integrations")
    .columns(["environment_id", "identifier"])
    .unique()
    .execute();
  // What a step asks: the environment's active integrations of a channel, primary first, newest next.
  await db.schema
    .createIndex("integrations_channel")
    .on("integrations")
    .columns(["environment_id", "channel", "active", "created_at"])
    .execute();

  if (t.dialect === "postgres") {
    await sql`alter table messages drop constraint messages_job_id_key`.execute(db);
  } else {
    await rebuildSqliteMessages(db, t);
  }
  await db.schema
    .createIndex("messages_delivery")
    .on("messages")
    .columns(["job_id", "provider_id"])
    .unique()
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
async function rebuildSqliteMessages(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("messages_rebuilt")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("notification_id", "text", (c) => c.notNull())
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("template_identifier", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("subscriber_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("cta", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("payload", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("provider_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("provider_message_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("seen", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("read", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("last_seen_at", t.timestamp)
    .addColumn("last_read_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // `select *`: a column added to messages by a migration before this one makes the copy fail
  // loudly rather than lose that column's values.
  await sql`insert into messages_rebuilt select * from messages`.execute(db);
  await sql`drop table messages`.execute(db);
  await sql`alter table messages_rebuilt rename to messages`.execute(db);
  // Migration 0005's indexes, dropped with the old table.
  await db.schema
    .createIndex("messages_feed")
    .on("messages")
    .columns(["subscriber_ref", "channel", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("messages_environment")
    .on("messages")
    .columns(["environment_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("messages_transaction")
    .on("messages")
    .columns(["environment_id", "transaction_id"])
    .execute();
}
