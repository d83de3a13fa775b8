import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// The inbox's `tags` filters decided in the index (docs/engine.md, "The inbox"). A message's tags
// are its workflow's when it was written, so an environment's messages carry few distinct lists of
// tags. Each list is kept once, in `message_tag_sets` (the environment, an id made from the list's
// JSON text, the text), and a message keeps the id in `tag_set` ('' for no tags), which joins the
// end of `messages_inbox`. A filter on tags then reads the environment's few lists and looks for
// their ids in the subscriber's range of the index: no table row, no JSON, per message. The writer
// of a message writes its list first (the engine's insertMessage).
//
// The id: the first 32 hex digits (128 bits) of the SHA-256 of the list's JSON text, as written.
// Two writings of one list (spacing, order) are two ids with the same tags, which a filter finds both.

/** A list of tags' id, from its JSON text (the application's tagSetId makes the same; so does the SQL below). */
const tagSetId = (tags: string) => createHash("sha256").update(tags, "utf8").digest("hex").slice(0, 32);

/** Lists written, or updated, per statement: a few parameters each, well under SQLite's limit. */
const CHUNK = 500;

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  // Rewriting every message with tags and building the index again take as long as the table is
  // large: past the connection's statement_timeout (a request's limit) on a big one. For this
  // migration's transaction only.
  if (t.dialect === "postgres") await sql`set local statement_timeout = 0`.execute(db);
  await db.schema
    .createTable("message_tag_sets")
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("tags", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("message_tag_sets_pk", ["environment_id", "id"])
    .execute();
  await db.schema
    .alterTable("messages")
    .addColumn("tag_set", "text", (c) => c.notNull().defaultTo(""))
    .execute();

  await db.schema.dropIndex("messages_inbox").execute();
  if (t.dialect === "postgres") {
    // In SQL, the same id as tagSetId's, set by rewriting the table (a change of the column's type
    // with USING): an UPDATE of every message would leave each one's old version behind, in the
    // table and in the index built below, until vacuumed.
    const id = sql`left(encode(sha256(convert_to(tags, 'UTF8')), 'hex'), 32)`;
    await sql`
      insert into message_tag_sets (environment_id, id, tags)
      select distinct environment_id, ${id}, tags from messages where tags <> '[]'`.execute(db);
    await sql`
      alter table messages alter column tag_set type text
      using (case when tags = '[]' then '' else ${id} end)`.execute(db);
  } else {
    // The lists written so far, then one pass over the messages per CHUNK lists.
    const { rows } = await sql<{ environment_id: string; tags: string }>`
      select distinct environment_id, tags from messages where tags <> '[]'`.execute(db);
    for (let i = 0; i < rows.length; i += CHUNK) {
      await db
        .insertInto("message_tag_sets")
        .values(
          rows
            .slice(i, i + CHUNK)
            .map((row) => ({ environment_id: row.environment_id, id: tagSetId(row.tags), tags: row.tags })),
        )
        .execute();
    }
    const lists = [...new Set(rows.map((row) => row.tags))];
    for (let i = 0; i < lists.length; i += CHUNK) {
      const chunk = lists.slice(i, i + CHUNK);
      const cases = sql.join(
        chunk.map((tags) => sql`when ${tags} then ${tagSetId(tags)}`),
        sql` `,
      );
      await sql`
        update messages set tag_set = case tags ${cases} end
        where tags in (${sql.join(chunk)})`.execute(db);
    }
  }
  await db.schema
    .createIndex("messages_inbox")
    .on("messages")
    .columns([
      "subscriber_ref",
      "channel",
      "created_at",
      "id",
      "archived",
      "read",
      "seen",
      "severity",
      "snoozed_until",
      "tag_set",
    ])
    .execute();
}
