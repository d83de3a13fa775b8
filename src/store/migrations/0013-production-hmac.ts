import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Production's inbox sessions always need the HMAC of the subscriberId from now on (the switch stays
// in Development only): a Production environment that had turned it off gets it back.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  const [on, off] = t.dialect === "postgres" ? [sql`true`, sql`false`] : [sql`1`, sql`0`];
  await db
    .updateTable("environments")
    .set({ hmac: on, updated_at: new Date().toISOString() })
    .where("name", "=", "Production")
    .where("hmac", "=", off)
    .execute();
}
