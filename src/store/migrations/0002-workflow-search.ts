import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// GET /v1/workflows?query= is a case-insensitive substring search on a workflow's name and trigger
// identifier. A LIKE '%x%' cannot use a b-tree, so each backend gets a trigram index:
// - PostgreSQL: pg_trgm GIN indexes (with btree_gin, so the environment is part of the index and one
//   tenant's search does not walk another tenant's matches).
// - SQLite: an FTS5 table with the trigram tokenizer. It is fed from `workflow_search`, a plain table
//   with an INTEGER PRIMARY KEY, because VACUUM may renumber the implicit rowid of `workflows` (its
//   key is text) and the full-text index must point at something stable. Triggers keep both in step
//   with every write to `workflows`, so no repository code has to remember them.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was, not as the app types say it is now.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  if (t.dialect === "postgres") await postgres(db);
  else await sqlite(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
async function postgres(db: Kysely<any>): Promise<void> {
  // Extensions are per database, not per schema, and two processes migrating at once (or two
  // schemas of one database) would race on CREATE EXTENSION: serialise them for this transaction.
  await sql`select pg_advisory_xact_lock(hashtext('tidings:extensions'))`.execute(db);
  // An extension installed into a schema that is later dropped takes every index using it along,
  // so it goes where it already is, else into public (when we may create there), else ours.
  const schemaOf = async (name: string) => {
    const existing = await sql<{ schema: string }>`
      select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
      where e.extname = ${name}`.execute(db);
    if (existing.rows[0]) return existing.rows[0].schema;
    const target = await sql<{ schema: string }>`
      select case when has_schema_privilege('public', 'CREATE') then 'public' else current_schema() end as schema
    `.execute(db);
    const schema = target.rows[0]?.schema ?? "public";
    await sql`create extension if not exists ${sql.id(name)} with schema ${sql.id(schema)}`.execute(db);
    return schema;
  };
  const trgm = await schemaOf("pg_trgm");
  await schemaOf("btree_gin");
  for (const column of ["name", "identifier"]) {
    await sql`
      create index ${sql.id(`workflows_search_${column}`)} on workflows
      using gin (environment_id, ${sql.id(column)} ${sql.id(trgm, "gin_trgm_ops")})
      where deleted = false`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
async function sqlite(db: Kysely<any>): Promise<void> {
  await sql`
    create table workflow_search (
      doc_id integer primary key,
      workflow_id text not null unique,
      environment_id text not null,
      name text not null,
      identifier text not null
    )`.execute(db);
  await sql`
    create virtual table workflow_search_fts using fts5(
      name, identifier, content = 'workflow_search', content_rowid = 'doc_id', tokenize = 'trigram'
    )`.execute(db);
  // The external-content triggers the FTS5 documentation prescribes.
  await sql`
    create trigger workflow_search_ai after insert on workflow_search begin
      insert into workflow_search_fts (rowid, name, identifier) values (new.doc_id, new.name, new.identifier);
    end`.execute(db);
  await sql`
    create trigger workflow_search_ad after delete on workflow_search begin
      insert into workflow_search_fts (workflow_search_fts, rowid, name, identifier)
      values ('delete', old.doc_id, old.name, old.identifier);
    end`.execute(db);
  await sql`
    create trigger workflow_search_au after update on workflow_search begin
      insert into workflow_search_fts (workflow_search_fts, rowid, name, identifier)
      values ('delete', old.doc_id, old.name, old.identifier);
      insert into workflow_search_fts (rowid, name, identifier) values (new.doc_id, new.name, new.identifier);
    end`.execute(db);
  // Live workflows only, as the PostgreSQL indexes: a deleted workflow is never searched.
  await sql`
    create trigger workflows_search_ai after insert on workflows when new.deleted = 0 begin
      insert into workflow_search (workflow_id, environment_id, name, identifier)
      values (new.id, new.environment_id, new.name, new.identifier);
    end`.execute(db);
  await sql`
    create trigger workflows_search_au after update of name, identifier, deleted on workflows begin
      delete from workflow_search where workflow_id = old.id;
      insert into workflow_search (workflow_id, environment_id, name, identifier)
      select new.id, new.environment_id, new.name, new.identifier where new.deleted = 0;
    end`.execute(db);
  await sql`
    create trigger workflows_search_ad after delete on workflows begin
      delete from workflow_search where workflow_id = old.id;
    end`.execute(db);
  await sql`
    insert into workflow_search (workflow_id, environment_id, name, identifier)
    select id, environment_id, name, identifier from workflows where deleted = 0`.execute(db);
}
