import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Workflows defined in code (@novu/framework apps, reached through their "bridge" endpoint): each
// environment keeps the URL of its bridge; a workflow says where it comes from (`origin`: "" for a
// workflow stored here, "external" for one synced from a bridge), the JSON Schema a trigger's payload
// must match ("" for none) and the definition its bridge answered at the last sync. Throttle steps
// count the runs they let through in `throttle_passes`, one row a run, per key.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .alterTable("environments")
    .addColumn("bridge_url", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .alterTable("workflows")
    .addColumn("origin", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .alterTable("workflows")
    .addColumn("payload_schema", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .alterTable("workflows")
    .addColumn("code_definition", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .createTable("throttle_passes")
    .addColumn("job_id", "text", (c) => c.primaryKey())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("throttle_key", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("throttle_passes_key")
    .on("throttle_passes")
    .columns(["throttle_key", "created_at"])
    .execute();
}
