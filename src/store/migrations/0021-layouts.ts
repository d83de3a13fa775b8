import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Email layouts (Novu's `/v1/layouts`): an environment's HTML frames, each with `{{{body}}}` where
// an email step's content goes, its own variables, and at most one default per environment. A
// promoted copy names its source in parent_id.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("layouts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("parent_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("creator_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("identifier", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("variables", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("is_default", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("layouts_identifier")
    .on("layouts")
    .columns(["environment_id", "identifier"])
    .unique()
    .execute();
  await db.schema
    .createIndex("layouts_newest")
    .on("layouts")
    .columns(["environment_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("layouts_parent")
    .on("layouts")
    .columns(["environment_id", "parent_id"])
    .execute();
}
