import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Subscribers, their preferences, topics and topic membership (docs/engine.md, "Subscribers, topics and
// preferences"), and what the environments routes need: a public application identifier and the HMAC switch
// per environment, and the last characters of each API key (so a listing can show which key is which without
// the key itself ever being stored).

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was, not as the app types say it is now.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await environments(db, t);

  await db.schema
    .alterTable("api_keys")
    .addColumn("key_hint", "text", (c) => c.notNull().defaultTo(""))
    .execute();

  // One row per environment × subscriberId. Profile fields hold "" when unset (never NULL), so the
  // row maps to Novu's shape with no special cases; data and channels are JSON text, read and
  // written whole.
  await db.schema
    .createTable("subscribers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("subscriber_id", "text", (c) => c.notNull())
    .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("last_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("email", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("phone", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("avatar", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("locale", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("data", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("channels", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("is_online", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("last_online_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // The upsert's conflict target and every read by subscriberId: one index probe at any size.
  await db.schema
    .createIndex("subscribers_subscriber_id")
    .on("subscribers")
    .columns(["environment_id", "subscriber_id"])
    .unique()
    .execute();
  // Pages of the environment's subscribers, oldest first.
  await db.schema
    .createIndex("subscribers_oldest")
    .on("subscribers")
    .columns(["environment_id", "created_at", "id"])
    .execute();

  // A subscriber's global preference (workflow_id "") and one per workflow it changed.
  await db.schema
    .createTable("subscriber_preferences")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull().references("subscribers.id").onDelete("cascade"))
    .addColumn("level", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("enabled", t.boolean, (c) => c.notNull())
    .addColumn("channels", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("subscriber_preferences_subscriber")
    .on("subscriber_preferences")
    .columns(["subscriber_ref", "workflow_id"])
    .unique()
    .execute();

  await db.schema
    .createTable("topics")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("topics_key")
    .on("topics")
    .columns(["environment_id", "key"])
    .unique()
    .execute();

  // Membership. The primary key (topic, subscriber row id) is what a fan-out walks: keyset pages
  // `where topic_id = ? and subscriber_ref > ? order by subscriber_ref limit n`, each one index range,
  // however large the topic. The subscriberId is kept beside it so a page needs no join.
  await db.schema
    .createTable("topic_subscribers")
    .addColumn("topic_id", "text", (c) => c.notNull().references("topics.id").onDelete("cascade"))
    .addColumn("subscriber_ref", "text", (c) => c.notNull().references("subscribers.id").onDelete("cascade"))
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("subscriber_id", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("topic_subscribers_pk", ["topic_id", "subscriber_ref"])
    .execute();
  // A subscriber's memberships (its deletion, "is it in this topic" by subscriber).
  await db.schema
    .createIndex("topic_subscribers_subscriber")
    .on("topic_subscribers")
    .column("subscriber_ref")
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
async function environments(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .alterTable("environments")
    .addColumn("identifier", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .alterTable("environments")
    .addColumn("hmac", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .execute();
  // Existing environments get what new ones are born with: a random public identifier, and HMAC
  // on for Production only.
  const rows: { id: string; name: string }[] = await db
    .selectFrom("environments")
    .select(["id", "name"])
    .execute();
  for (const row of rows) {
    await db
      .updateTable("environments")
      .set({ identifier: randomBytes(9).toString("base64url"), hmac: row.name === "Production" })
      .where("id", "=", row.id)
      .execute();
  }
  await db.schema
    .createIndex("environments_identifier")
    .on("environments")
    .column("identifier")
    .unique()
    .execute();
}
