import type { Kysely } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// The activity filters notifications by their subscribers' e-mail addresses (Novu's `emails`): the
// addresses are looked up here, exactly, so that the filter seeks rather than reads every
// subscriber of the environment.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, _t: ColumnTypes): Promise<void> {
  await db.schema
    .createIndex("subscribers_email")
    .on("subscribers")
    .columns(["environment_id", "email"])
    .execute();
}
