import { type Kysely, type SelectQueryBuilder, sql } from "kysely";
import { countUpTo } from "./values.ts";

/**
 * Keyset pages as Novu's /v2 lists page (its `findWithCursorBasedPagination`): ordered by a column
 * and then the row id, a page goes `after` or `before` a row named by its id (`includeCursor` takes
 * that row too), and answers the id to go on from in each direction (`next`, `previous`; null at an
 * end). Each page is one index range, whatever page it is; `totalCount` is counted up to
 * TOTAL_COUNT_CAP, no further (`totalCountCapped` then).
 */

export const TOTAL_COUNT_CAP = 50_000;

export type Direction = "asc" | "desc";

export interface CursorRequest {
  after?: string | undefined;
  before?: string | undefined;
  limit: number;
  direction: Direction;
  includeCursor?: boolean | undefined;
}

export interface CursorPage<R> {
  rows: R[];
  next: string | null;
  previous: string | null;
  totalCount: number;
  totalCountCapped: boolean;
}

/** Where the rows come from: the table (its name as the subquery reads the cursor's row), and the columns as the query names them. */
export interface CursorColumns {
  /** The table holding the cursor's row. */
  table: string;
  /** The sort column and the id column in that table (unqualified). */
  sort: string;
  id: string;
  /** The same two as the page's query names them (qualified when it joins). */
  sortRef: string;
  idRef: string;
}

type Comparison = ">" | ">=" | "<" | "<=";

/**
 * One page of `query` (already filtered to what may be seen, selecting what the caller reads, with
 * `id` among it under `idKey`). The cursor must name a row `exists` finds: the caller checks that
 * first (an unknown cursor is its 400 to say).
 */
export async function cursorPage<DB, TB extends keyof DB, O>(
  // Any database type: the page's query may name tables by aliases the database's own type lacks.
  // biome-ignore lint/suspicious/noExplicitAny: only executes what the typed query built.
  db: Kysely<any>,
  query: SelectQueryBuilder<DB, TB, O>,
  columns: CursorColumns,
  request: CursorRequest,
  idOf: (row: O) => string,
): Promise<CursorPage<O>> {
  const { after, before, limit, direction, includeCursor } = request;
  const ascending = direction === "asc";
  const forward = before === undefined;
  const cursor = before ?? after;
  const sortRef = sql.ref(columns.sortRef);
  const idRef = sql.ref(columns.idRef);
  const rowOf = (id: string) =>
    sql`(select ${sql.ref(columns.sort)}, ${sql.ref(columns.id)} from ${sql.table(columns.table)} where ${sql.ref(columns.id)} = ${id})`;
  const beyond = (q: SelectQueryBuilder<DB, TB, O>, id: string, op: Comparison) =>
    q.where(sql<boolean>`(${sortRef}, ${idRef}) ${sql.raw(op)} ${rowOf(id)}`);
  const ordered = (q: SelectQueryBuilder<DB, TB, O>, asc: boolean) => {
    const order = asc ? sql.raw("asc") : sql.raw("desc");
    return q.orderBy(sql`${sortRef} ${order}`).orderBy(sql`${idRef} ${order}`);
  };
  // The comparison that keeps rows on the page's side of the cursor, in the list's own order.
  const later: Comparison = ascending ? ">" : "<";
  const earlier: Comparison = ascending ? "<" : ">";
  const inclusive = (op: Comparison): Comparison => (includeCursor ? (`${op}=` as Comparison) : op);

  let page = query;
  if (cursor !== undefined) page = beyond(page, cursor, inclusive(forward ? later : earlier));
  // Before the cursor: read backwards from it, then turn the page around.
  const fetched = await ordered(page, forward ? ascending : !ascending)
    .limit(limit + 1)
    .execute();
  const extra = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (!forward) rows.reverse();
  const counted = await countUpTo(db, query, TOTAL_COUNT_CAP + 1);
  const totalCount = Math.min(counted, TOTAL_COUNT_CAP);
  const totalCountCapped = counted > TOTAL_COUNT_CAP;
  const first = rows[0];
  const last = rows.at(-1);
  if (!first || !last) return { rows, next: null, previous: null, totalCount, totalCountCapped };
  const anyBeyond = async (id: string, op: Comparison) =>
    (await beyond(query, id, op).limit(1).execute()).length > 0;
  const next = forward
    ? extra
      ? idOf(last)
      : null
    : (await anyBeyond(idOf(last), later))
      ? idOf(last)
      : null;
  const previous = forward
    ? (await anyBeyond(idOf(first), earlier))
      ? idOf(first)
      : null
    : extra
      ? idOf(first)
      : null;
  return { rows, next, previous, totalCount, totalCountCapped };
}
