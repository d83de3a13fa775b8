import type { Kysely } from "kysely";

// Frozen in time: imports nothing from the application.
//
// An organization's branding (Novu's `PUT /v1/organizations/branding`): logo, colours, font and
// content background, which emails and layouts read as {{branding.*}}. JSON text.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("organizations")
    .addColumn("branding", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
}
