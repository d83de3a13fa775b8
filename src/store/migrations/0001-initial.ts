import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: a migration imports nothing from the application, so changing the app's types
// later cannot change what an old migration does.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was, not as the app types say it is now.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("environments")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("parent_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("environments_organization")
    .on("environments")
    .columns(["organization_id", "name"])
    .unique()
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("revoked_at", t.timestamp)
    .execute();
  await db.schema.createIndex("api_keys_environment").on("api_keys").column("environment_id").execute();

  await db.schema
    .createTable("notification_groups")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("name_key", "text", (c) => c.notNull())
    .addColumn("parent_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("notification_groups_name")
    .on("notification_groups")
    .columns(["environment_id", "name_key"])
    .unique()
    .execute();

  // Documents (steps, triggers, settings) are stored as JSON text on both backends: they are only
  // ever read and written whole, never queried into, and text costs PostgreSQL no parse on write.
  await db.schema
    .createTable("workflows")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("identifier", "text", (c) => c.notNull())
    .addColumn("active", t.boolean, (c) => c.notNull())
    .addColumn("draft", t.boolean, (c) => c.notNull())
    .addColumn("critical", t.boolean, (c) => c.notNull())
    .addColumn("tags", "text", (c) => c.notNull())
    .addColumn("steps", "text", (c) => c.notNull())
    .addColumn("triggers", "text", (c) => c.notNull())
    .addColumn("preference_settings", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("workflow_integration_status", "text", (c) => c.notNull())
    .addColumn("notification_group_id", "text", (c) => c.notNull().references("notification_groups.id"))
    .addColumn("parent_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("creator_id", "text", (c) => c.notNull())
    .addColumn("deleted", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("deleted_at", t.timestamp)
    .addColumn("deleted_by", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // Live workflows only: a deleted workflow frees its identifier. The predicates are literals so the
  // planners of both backends can match them against the same literal in our queries.
  await db.schema
    .createIndex("workflows_identifier")
    .on("workflows")
    .columns(["environment_id", "identifier"])
    .unique()
    .where(sql.ref("deleted"), "=", sql`false`)
    .execute();
  await db.schema
    .createIndex("workflows_newest")
    .on("workflows")
    .columns(["environment_id", "created_at desc", "id desc"])
    .where(sql.ref("deleted"), "=", sql`false`)
    .execute();
  await db.schema
    .createIndex("workflows_group")
    .on("workflows")
    .columns(["notification_group_id"])
    .where(sql.ref("deleted"), "=", sql`false`)
    .execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("status_code", "integer", (c) => c.notNull())
    .addColumn("response_body", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("expires_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["environment_id", "key"])
    .execute();
  await db.schema
    .createIndex("idempotency_keys_expiry")
    .on("idempotency_keys")
    .column("expires_at")
    .execute();
}
