import {
  type Expression,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from "kysely";
import type { Database } from "./schema.ts";

/**
 * The one place where the two backends' value representations meet: SQLite hands back booleans as
 * 0/1 and timestamps as ISO text; PostgreSQL as boolean and Date. JSON is text on both.
 */
export function readBool(value: boolean | number): boolean {
  return value === true || value === 1;
}

export function readTimestamp(value: string | Date | null | undefined): string {
  if (value === null || value === undefined) return "";
  return value instanceof Date ? value.toISOString() : value;
}

export function readJson<T>(value: string): T {
  return JSON.parse(value) as T;
}

export function writeJson(value: unknown): string {
  return JSON.stringify(value);
}

// ES2024's String.prototype.isWellFormed and toWellFormed: Node 20 has them, the ES2022 library
// these sources are checked against does not name them.
const unicode = String.prototype as unknown as {
  isWellFormed(this: string): boolean;
  toWellFormed(this: string): string;
};

/**
 * `text` with each lone surrogate (half of a UTF-16 pair, alone: not a character) as U+FFFD, as
 * UTF-8 encoding writes it. What PostgreSQL stores of a text parameter; SQLite, given one, stored
 * the surrogate's own three bytes, which are not UTF-8 (read back as three U+FFFD), and PostgreSQL's
 * JSON refuses the escape JSON.stringify writes for one.
 */
export function wellFormed(text: string): string {
  return unicode.isWellFormed.call(text) ? text : unicode.toWellFormed.call(text);
}

const dialects = new WeakMap<Kysely<Database>, "sqlite" | "postgres">();

/**
 * Which backend a Kysely instance (or transaction) talks to, for the few queries that must be spelt
 * differently (text search) and for the statements kept compiled per backend. Told by Kysely's
 * public API: the SQL it compiles for a parameter (SQLite's `?`, PostgreSQL's `$1`), once per
 * instance; asking it keeps the backend out of every service signature.
 */
export function dialectOf(db: Kysely<Database>): "sqlite" | "postgres" {
  let dialect = dialects.get(db);
  if (dialect === undefined) {
    dialect = sql`${0}`.compile(db).sql === "?" ? "sqlite" : "postgres";
    dialects.set(db, dialect);
  }
  return dialect;
}

/**
 * `column = value` as a check on rows a list of ids finds, never as the way to find them. SQLite
 * plans without statistics (none are gathered): given `subscriber_ref = ? and id in (...)` it reads
 * the subscriber's whole range of `messages_inbox` (or, for `environment_id`, the environment's range
 * of `messages_environment`) however few the ids. So on SQLite the column is written `+column`, its
 * documented way to keep a term from choosing an index; PostgreSQL plans from its statistics, and
 * takes the primary key for a few ids by itself.
 */
export function checkOnly(db: Kysely<Database>, column: string, value: string): Expression<SqlBool> {
  return dialectOf(db) === "sqlite"
    ? sql<SqlBool>`+${sql.ref(column)} = ${value}`
    : sql<SqlBool>`${sql.ref(column)} = ${value}`;
}

/** True when a write failed because a row it references is gone, or is still referenced. */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_FOREIGNKEY" || code === "23503";
}

/**
 * How many rows a filtered select would return: the total beside a page (`totalCount`). Both
 * backends answer count(*) as a different type (number, bigint, or a numeric string).
 */
export async function countRows<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
): Promise<number> {
  // Kysely cannot resolve the selection's type for a generic table, hence the cast.
  const row = (await query
    .clearSelect()
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("total"))
    .executeTakeFirstOrThrow()) as { total: number | string | bigint };
  return Number(row.total);
}

/**
 * An offset page of a table's rows matching `query`, newest first (by created_at, then id), and how
 * many match in all: the v1 lists' `page` and `totalCount`.
 */
export async function newestFirstPage<TB extends "notifications" | "messages">(
  query: SelectQueryBuilder<Database, TB, object>,
  page: { offset: number; limit: number },
): Promise<{ rows: Selectable<Database[TB]>[]; total: number }> {
  const [rows, total] = await Promise.all([
    query
      .selectAll()
      .orderBy(sql.ref("created_at"), "desc")
      .orderBy(sql.ref("id"), "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    countRows(query),
  ]);
  // Kysely cannot resolve selectAll's row type for a generic table, hence the cast.
  return { rows: rows as unknown as Selectable<Database[TB]>[], total };
}

/**
 * countRows, counting no further than `limit`: the rows are read from the query's index up to the
 * limit and no further, so what it costs is bounded by the limit whatever the table holds. For a
 * rule that only needs to know whether there are more than so many.
 */
export async function countUpTo<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  query: SelectQueryBuilder<DB, TB, O>,
  limit: number,
): Promise<number> {
  const bounded = query.clearSelect().select(sql<number>`1`.as("one")).limit(limit);
  const { rows } = await sql<{
    total: number | string | bigint;
  }>`select count(*) as total from (${bounded}) as bounded`.execute(db);
  return Number(rows[0]?.total ?? 0);
}
