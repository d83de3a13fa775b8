import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Tenants (Novu's `/v1/tenants`): the customer organizations of an environment, each named by an
// identifier unique in the environment, with a name and free data that templates and conditions
// read when a trigger names the tenant.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("tenants")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("identifier", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("data", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("tenants_identifier")
    .on("tenants")
    .columns(["environment_id", "identifier"])
    .unique()
    .execute();
  // The listing, newest first.
  await db.schema
    .createIndex("tenants_newest")
    .on("tenants")
    .columns(["environment_id", "created_at", "id"])
    .execute();
}
