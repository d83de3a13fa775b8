import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Feeds (Novu's `/v1/feeds`): named tabs of the in-app feed that in-app steps name (`_feedId`).
// The identifier is the name, unique in the environment.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("feeds")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("identifier", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("feeds_identifier")
    .on("feeds")
    .columns(["environment_id", "identifier"])
    .unique()
    .execute();
}
