import { type Compilable, CompiledQuery, type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";
import { dialectOf, wellFormed } from "./values.ts";

/**
 * Hot statements, built and compiled by Kysely once per shape instead of on every call.
 *
 * Kysely builds an immutable tree for every query and compiles it to SQL each time: in the trigger
 * benchmark's profile that was a sixth of the service's CPU, more than SQLite's own work for some of
 * the statements. A prepared statement is built once per backend and shape with a placeholder
 * (`slot(name)`) where each value goes; every call then only puts its values in the placeholders'
 * places. The SQL is Kysely's own, so both backends keep one definition of the statement.
 *
 * A placeholder must reach the compiled statement as a bound parameter, unchanged: the first build
 * checks that each one did, and that none ended up in the SQL text.
 */

const MARK = "\u0000slot:";

/** The placeholder for the value called `name` (typed to fit any column). */
export function slot(name: string): never {
  return `${MARK}${name}` as never;
}

interface Template {
  sql: string;
  /** Per parameter: the name of the value that goes there, or the constant the build bound. */
  parameters: ({ name: string } | { constant: unknown })[];
}

// Per backend, then per statement and shape.
const templates = new Map<string, Map<string, Template>>();

function compileTemplate(
  shape: string,
  build: () => Compilable<unknown>,
  values: Record<string, unknown>,
): Template {
  const compiled = build().compile();
  if (compiled.sql.includes(MARK))
    throw new Error(`prepared statement ${shape}: a placeholder is in its SQL`);
  const template: Template = {
    sql: compiled.sql,
    parameters: compiled.parameters.map((value) =>
      typeof value === "string" && value.startsWith(MARK)
        ? { name: value.slice(MARK.length) }
        : { constant: value },
    ),
  };
  // A value the statement has no place for would be dropped without a word: refuse it once, here
  // (an undefined one is a value this shape does without).
  const used = new Set(template.parameters.map((parameter) => ("name" in parameter ? parameter.name : "")));
  for (const [name, value] of Object.entries(values))
    if (!used.has(name) && value !== undefined)
      throw new Error(`prepared statement ${shape}: nowhere to put ${name}`);
  return template;
}

function templateOf(db: Kysely<Database>, shape: string, compile: () => Template): Template {
  const backend = dialectOf(db);
  let shapes = templates.get(backend);
  if (!shapes) {
    shapes = new Map();
    templates.set(backend, shapes);
  }
  let template = shapes.get(shape);
  if (!template) {
    template = compile();
    shapes.set(shape, template);
  }
  return template;
}

/**
 * The statement `build` makes, for `values`: built and compiled on the first call for this backend
 * and `shape` (a name that tells apart everything that changes the SQL, such as a row count).
 */
export function prepared(
  db: Kysely<Database>,
  shape: string,
  build: () => Compilable<unknown>,
  values: Record<string, unknown>,
): CompiledQuery {
  const template = templateOf(db, shape, () => compileTemplate(shape, build, values));
  return fill(shape, template, values);
}

/** The value a statement's placeholder `name` takes from `values`; a missing one is an error. */
function namedValue(shape: string, name: string, values: Record<string, unknown>): unknown {
  if (!(name in values)) throw new Error(`prepared statement ${shape}: no value for ${name}`);
  return values[name];
}

/** A template's statement with `values` in its placeholders' places. */
function fill(shape: string, template: Template, values: Record<string, unknown>): CompiledQuery {
  const parameters = template.parameters.map((parameter) =>
    "constant" in parameter ? parameter.constant : namedValue(shape, parameter.name, values),
  );
  return CompiledQuery.raw(template.sql, parameters);
}

/** Runs a prepared statement; its rows as the backend returns them. */
export async function runPrepared<Row>(
  db: Kysely<Database>,
  shape: string,
  build: () => Compilable<unknown>,
  values: Record<string, unknown>,
): Promise<Row[]> {
  return (await db.executeQuery<Row>(prepared(db, shape, build, values))).rows;
}

/** Statements of up to this many rows are kept prepared; a larger batch is compiled for its call. */
const MAX_PREPARED_ROWS = 32;

export interface RowSlots<Row> {
  /** The rows to build the INSERT from: a placeholder where each value goes. */
  placeholders: Row[];
  /** The values, by placeholder name. */
  values: Record<string, unknown>;
}

/**
 * For a multi-row INSERT: the rows' placeholders (`column:index`) and their values. A column whose
 * value is undefined is left out of its row, as Kysely leaves it out (the column's default applies);
 * `rowsShape` tells such statements apart.
 */
export function rowSlots<Row extends Record<string, unknown>>(rows: readonly Row[]): RowSlots<Row> {
  const placeholders: Row[] = [];
  const values: Record<string, unknown> = {};
  rows.forEach((row, index) => {
    const placeholder: Record<string, unknown> = {};
    for (const column in row) {
      const value = row[column];
      if (value === undefined) continue;
      placeholder[column] = slot(`${column}:${index}`);
      values[`${column}:${index}`] = value;
    }
    placeholders.push(placeholder as Row);
  });
  return { placeholders, values };
}

/** The columns a row sets (those whose value is not undefined), in its order. */
function columnsSet(row: Record<string, unknown>): string[] {
  const columns: string[] = [];
  for (const column in row) if (row[column] !== undefined) columns.push(column);
  return columns;
}

/** Whether `row` sets exactly `columns`, in that order (without building its list: most rows do). */
function setsColumns(row: Record<string, unknown>, columns: readonly string[]): boolean {
  let at = 0;
  for (const column in row) {
    if (row[column] === undefined) continue;
    if (columns[at] !== column) return false;
    at++;
  }
  return at === columns.length;
}

/** A list of columns as shapes name it: `a,b,`. */
const signatureOf = (columns: readonly string[]) => (columns.length > 0 ? `${columns.join(",")},` : "");

/**
 * The shape of an INSERT of `rows` called `name`: its row count and the columns its rows set (runs
 * of rows setting the same ones named once); undefined (built from its rows for its call, not kept) past
 * MAX_PREPARED_ROWS rows.
 */
export function rowsShape(name: string, rows: readonly Record<string, unknown>[]): string | undefined {
  if (rows.length > MAX_PREPARED_ROWS) return undefined;
  const signatures: string[] = [];
  // The columns of the run of rows under way: a row that sets the same ones continues it, any other
  // starts the next run.
  let columns: string[] | undefined;
  for (const row of rows) {
    if (columns !== undefined && setsColumns(row, columns)) continue;
    columns = columnsSet(row);
    signatures.push(signatureOf(columns));
  }
  return `${name} ${rows.length} ${signatures.length === 1 ? (signatures[0] ?? "") : signatures.join("|")}`;
}

/** Where each parameter of a multi-row template comes from: a row's column, or a constant of the build. */
type RowPick = { row: number; column: string } | { constant: unknown };
const rowPicks = new WeakMap<Template, RowPick[]>();

function picksOf(template: Template): RowPick[] {
  let picks = rowPicks.get(template);
  if (!picks) {
    picks = template.parameters.map((parameter) => {
      if ("constant" in parameter) return parameter;
      // rowSlots names a row's value `column:index`.
      const at = parameter.name.lastIndexOf(":");
      return { row: Number(parameter.name.slice(at + 1)), column: parameter.name.slice(0, at) };
    });
    rowPicks.set(template, picks);
  }
  return picks;
}

/**
 * Runs a prepared multi-row INSERT over `rows`: `build` makes it from the rows' placeholders; its
 * shape is `name` with the rows' count and columns (see `rowsShape`). The rows it returns are those
 * the statement returns. Once its template is known, each parameter is read from its row and column
 * directly: no named values are gathered for the call. Past MAX_PREPARED_ROWS rows the statement
 * is one text on PostgreSQL (below), in prepared pieces inside a SQLite transaction, and otherwise
 * `build` gets the rows themselves, so it must use them as the INSERT's values and nowhere else.
 */
export async function runPreparedRows<Values extends Record<string, unknown>, Output>(
  db: Kysely<Database>,
  name: string,
  rows: readonly Values[],
  build: (placeholders: Values[]) => Compilable<Output>,
): Promise<Output[]> {
  if (rows.length > 0 && dialectOf(db) === "postgres") {
    const columns = sameColumns(rows);
    const template = columns === undefined ? undefined : rowSetTemplate(name, columns, rows, build);
    if (template) {
      // Only the statement's columns: a row's undefined ones are left out of the JSON as well.
      let json = JSON.stringify(rows);
      // JSON.stringify writes a lone surrogate as an escape (\ud800), which PostgreSQL's JSON refuses:
      // such strings go as U+FFFD, as a text parameter's UTF-8 has them. (A pair is written as it is.)
      if (json.includes("\\ud"))
        json = JSON.stringify(rows, (_key, value) => (typeof value === "string" ? wellFormed(value) : value));
      const parameters = [json, ...template.constants];
      return (await db.executeQuery<Output>(CompiledQuery.raw(template.sql, parameters))).rows;
    }
  }
  const shape = rowsShape(name, rows);
  if (shape === undefined && db.isTransaction && dialectOf(db) === "sqlite") {
    // SQLite, in a transaction: in prepared pieces of MAX_PREPARED_ROWS rows (building the whole
    // INSERT with Kysely on every call cost more than SQLite's own work on its rows). Each piece
    // runs when it is called (the driver is synchronous: no round trip), and a savepoint around
    // them undoes the pieces before a failing one, so the rows are written together or not at all,
    // as by one statement.
    await sql`savepoint prepared_rows`.execute(db);
    try {
      const out: Output[] = [];
      for (let start = 0; start < rows.length; start += MAX_PREPARED_ROWS)
        out.push(...(await runPreparedRows(db, name, rows.slice(start, start + MAX_PREPARED_ROWS), build)));
      await sql`release prepared_rows`.execute(db);
      return out;
    } catch (error) {
      await sql`rollback to prepared_rows`.execute(db);
      await sql`release prepared_rows`.execute(db);
      throw error;
    }
  }
  if (shape === undefined) {
    // A large batch, compiled for this call and not kept, so built from the rows themselves: an
    // INSERT's values reach its parameters as they are, where placeholders would go through a table
    // of thousands of named values (for a fan-out's pages of hundreds of rows that cost more CPU
    // than SQLite's own work on them).
    return (await db.executeQuery<Output>(build([...rows]).compile())).rows;
  }
  const template = templateOf(db, shape, () => {
    const slots = rowSlots(rows);
    return compileTemplate(shape, () => build(slots.placeholders), slots.values);
  });
  const parameters = picksOf(template).map((pick) => {
    if ("constant" in pick) return pick.constant;
    const value = rows[pick.row]?.[pick.column];
    if (value === undefined)
      throw new Error(`prepared statement ${shape}: no value for ${pick.column}:${pick.row}`);
    return value;
  });
  return (await db.executeQuery<Output>(CompiledQuery.raw(template.sql, parameters))).rows;
}

/**
 * PostgreSQL: a multi-row INSERT whose text does not change with its row count. The rows go as one
 * parameter, a JSON array, which `json_populate_recordset` turns into rows of the table's own type
 * (each value converted to its column's type by PostgreSQL's JSON rules, as a parameter's text
 * would be); the INSERT takes its columns from them:
 *
 *   insert into "t" ("a", "b") select "a", "b" from json_populate_recordset(null::"t", $1::text::json)
 *
 * The driver prepares a statement once per connection and keeps it for the connection's life, for
 * every different text it is given (postgres 3.4.9 keeps them all, and so does each server process).
 * A text per row count made that a statement per batch size, per table, per connection: each one
 * described anew before its first use (a round trip more), and a fan-out's pages of 500 rows kept
 * ~1 MB of SQL each in every connection's cache (55 MB of strings in a heap snapshot taken during one).
 * One text per table and set of columns keeps the cache to a few statements.
 */
interface RowSetTemplate {
  sql: string;
  /** The parameters the build bound after the rows (its ON CONFLICT or RETURNING constants). */
  constants: unknown[];
}

// Per statement name and columns; null where the built statement is not a plain INSERT ... VALUES.
const rowSetTemplates = new Map<string, RowSetTemplate | null>();

/** The columns every row sets (in the first row's order), when all rows set the same ones. */
function sameColumns(rows: readonly Record<string, unknown>[]): string | undefined {
  const [head] = rows;
  if (head === undefined) return undefined;
  const columns = columnsSet(head);
  for (let i = 1; i < rows.length; i++)
    if (!setsColumns(rows[i] as Record<string, unknown>, columns)) return undefined;
  return signatureOf(columns);
}

const INSERT_VALUES =
  /^insert into ("[^"]+"(?:\."[^"]+")?) \(((?:"[^"]+", )*"[^"]+")\) values \(((?:\$\d+, )*\$\d+)\)( .*)?$/s;

function rowSetTemplate<Values extends Record<string, unknown>, Output>(
  name: string,
  columns: string,
  rows: readonly Values[],
  build: (placeholders: Values[]) => Compilable<Output>,
): RowSetTemplate | undefined {
  const key = `${name} ${columns}`;
  let template = rowSetTemplates.get(key);
  if (template === undefined) {
    template = compileRowSet(rows[0] as Values, build);
    rowSetTemplates.set(key, template);
  }
  return template ?? undefined;
}

/**
 * Builds the statement for one row and rewrites its VALUES as a row set; null (the caller keeps the
 * statement per row count) unless the build made exactly `insert into t (columns) values (one
 * placeholder per column, in order)` and then no other placeholder.
 */
function compileRowSet<Values extends Record<string, unknown>, Output>(
  row: Values,
  build: (placeholders: Values[]) => Compilable<Output>,
): RowSetTemplate | null {
  const slots = rowSlots([row]);
  const compiled = build(slots.placeholders).compile();
  const match = INSERT_VALUES.exec(compiled.sql);
  if (!match) return null;
  const [, table, columnList, valueList, rest = ""] = match;
  const columns = (columnList as string).split(", ").map((quoted) => quoted.slice(1, -1));
  const values = (valueList as string).split(", ");
  if (values.length !== columns.length) return null;
  // Each value a placeholder of its own column, numbered 1..n: the columns' order is the values'.
  for (let i = 0; i < columns.length; i++) {
    const parameter = compiled.parameters[i];
    if (values[i] !== `$${i + 1}` || parameter !== slot(`${columns[i]}:0`)) return null;
  }
  const constants = compiled.parameters.slice(columns.length);
  if (constants.some((value) => typeof value === "string" && value.startsWith(MARK))) return null;
  const after = (rest as string).replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) - columns.length + 1}`);
  return {
    sql: `insert into ${table} (${columnList}) select ${columnList} from json_populate_recordset(null::${table}, $1::text::json)${after}`,
    constants,
  };
}

/**
 * For a list in a statement (`in (...)`): a placeholder per item, named `name0`, `name1`, ..., and
 * the values to go with them. The list's length is part of the statement's shape.
 */
export function listSlots(name: string, items: readonly unknown[]) {
  const values: Record<string, unknown> = {};
  const placeholders = items.map((item, i) => {
    values[`${name}${i}`] = item;
    return slot(`${name}${i}`);
  });
  return { placeholders, values };
}

/** The longest list `runPreparedList` keeps prepared; a longer one is compiled for its call. */
const MAX_PREPARED_LIST = 128;

/** The name of a list's placeholders (`listSlots` numbers them after it). */
const LIST = "\u0001list";

/** Where each parameter of a list's template comes from: an item, a named value, or a constant. */
type ListPick = { item: number } | { name: string } | { constant: unknown };
const listPicks = new WeakMap<Template, ListPick[]>();

function listPicksOf(template: Template): ListPick[] {
  let picks = listPicks.get(template);
  if (!picks) {
    picks = template.parameters.map((parameter) =>
      "name" in parameter && parameter.name.startsWith(LIST)
        ? { item: Number(parameter.name.slice(LIST.length)) }
        : parameter,
    );
    listPicks.set(template, picks);
  }
  return picks;
}

/**
 * Runs a statement over a list of values of any length (`where id in (...)`): `build` makes it
 * from the list's placeholders and `slot`s for `values`. The list is padded to the next power of
 * two with its last item, which changes nothing an `in` list matches, so lists of every length up to
 * MAX_PREPARED_LIST take eight shapes and are built and compiled once each, not on every call (an
 * update of many jobs that Kysely built each time cost more CPU than SQLite's own work on it).
 * `build` may name the list elsewhere than in an `in`; only where a repeated item changes nothing.
 */
export async function runPreparedList<Row>(
  db: Kysely<Database>,
  shape: string,
  items: readonly unknown[],
  build: (list: readonly never[]) => Compilable<unknown>,
  values: Record<string, unknown> = {},
): Promise<Row[]> {
  if (items.length === 0) throw new Error(`prepared statement ${shape}: an empty list`);
  let size = 1;
  while (size < items.length) size *= 2;
  if (size > MAX_PREPARED_LIST) {
    // Compiled for this call and not kept: the list's own values, then the named ones filled in.
    const template = compileTemplate(shape, () => build(items as never[]), values);
    return (await db.executeQuery<Row>(fill(shape, template, values))).rows;
  }
  const sized = `${shape} [${size}]`;
  const last = items.length - 1;
  const template = templateOf(db, sized, () => {
    const list = listSlots(
      LIST,
      Array.from({ length: size }, (_, i) => items[Math.min(i, last)]),
    );
    return compileTemplate(sized, () => build(list.placeholders as never[]), { ...values, ...list.values });
  });
  // Each item straight from the list (the last one again past its end): no table of named values.
  const parameters = listPicksOf(template).map((pick) => {
    if ("constant" in pick) return pick.constant;
    if ("item" in pick) return items[Math.min(pick.item, last)];
    return namedValue(sized, pick.name, values);
  });
  return (await db.executeQuery<Row>(CompiledQuery.raw(template.sql, parameters))).rows;
}
