import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Workflow overrides (Novu's `/v1/workflow-overrides`): for one workflow and one tenant (Novu's),
// whether the workflow runs for that tenant's triggers and its channel defaults there. One per
// workflow and tenant.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("workflow_overrides")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("tenant_id", "text", (c) => c.notNull())
    .addColumn("active", t.boolean, (c) => c.notNull().defaultTo(sql`true`))
    .addColumn("preference_settings", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("workflow_overrides_pair")
    .on("workflow_overrides")
    .columns(["environment_id", "workflow_id", "tenant_id"])
    .unique()
    .execute();
  await db.schema
    .createIndex("workflow_overrides_newest")
    .on("workflow_overrides")
    .columns(["environment_id", "created_at", "id"])
    .execute();
}
