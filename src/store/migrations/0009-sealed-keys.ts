import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// The inbox widget's HMAC (docs/engine.md, "The inbox widget in real time") is keyed with the environment's
// API key, which is stored only as a hash. `key_sealed` keeps the key itself, encrypted with the service's
// secret key (AES-256-GCM, bound to the key's id), so a session's hash can be checked. NULL for keys made
// before this column, or by a process without the secret key: those keys cannot check an HMAC.
//
// PostgreSQL only: socket_io_attachments, the table @socket.io/postgres-adapter keeps a message in
// when it is over NOTIFY's 8000 bytes (ours never are; the adapter's cleanup reads the table anyway).

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema.alterTable("api_keys").addColumn("key_sealed", "text").execute();
  if (t.dialect !== "postgres") return;
  await db.schema
    .createTable("socket_io_attachments")
    .addColumn("id", "bigserial", (c) => c.unique())
    .addColumn("created_at", "timestamptz", (c) => c.defaultTo(sql`now()`))
    .addColumn("payload", "bytea")
    .execute();
}
