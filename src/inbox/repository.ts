import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from "kysely";
import {
  type Message,
  type MessageCta,
  messageFromRow,
  notificationsOfTransactions,
} from "../engine/domain.ts";
import type { Database } from "../store/schema.ts";
import {
  checkOnly,
  countRows,
  dialectOf,
  newestFirstPage,
  readJson,
  readTimestamp,
  writeJson,
} from "../store/values.ts";
import type { Channel } from "../workflows/domain.ts";
import type { DataValue, NotificationFilter } from "./filters.ts";

type Db = Kysely<Database>;

/** `payload` leaves as dot paths and values: `{a: {b: 1}}` → `[["a.b", 1]]`. */
function leaves(value: Record<string, unknown>, prefix = ""): [string, unknown][] {
  return Object.entries(value).flatMap(([key, item]) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? leaves(item as Record<string, unknown>, `${prefix}${key}.`)
      : [[`${prefix}${key}`, item] as [string, unknown]],
  );
}

/** Holds when the stored payload has every leaf of `subset` with the same value. */
function payloadContains(db: Db, subset: Record<string, unknown>) {
  const sqlite = dialectOf(db) === "sqlite";
  return (eb: ExpressionBuilder<Database, "messages">): Expression<SqlBool> =>
    eb.and(
      leaves(subset).map(([path, value]) => {
        if (sqlite) {
          const jsonPath = `$.${path
            .split(".")
            .map((p) => `"${p.replace(/"/g, '""')}"`)
            .join(".")}`;
          // json_extract gives booleans as 0/1, numbers as numbers, strings as text.
          const expected = typeof value === "boolean" ? Number(value) : (value as string | number | null);
          if (Array.isArray(value))
            return sql<SqlBool>`json_extract(payload, ${jsonPath}) = json(${writeJson(value)})`;
          return expected === null
            ? sql<SqlBool>`json_type(payload, ${jsonPath}) = 'null'`
            : sql<SqlBool>`json_extract(payload, ${jsonPath}) = ${expected}`;
        }
        const json = writeJson(
          path.split(".").reduceRight<unknown>((inner, key) => ({ [key]: inner }), value),
        );
        // Through text: a parameter the server types as jsonb is JSON-encoded again by the driver (a JSON string).
        return sql<SqlBool>`(payload::jsonb @> ${json}::text::jsonb)`;
      }),
    );
}

/**
 * Only the messages of these feeds (Novu's `feedIdentifier`): the environment's feeds named by these
 * identifiers. An identifier no feed has matches nothing.
 */
export interface FeedsFilter {
  environmentId: string;
  identifiers: readonly string[];
}

function inFeeds(db: Db, feeds: FeedsFilter) {
  return (eb: ExpressionBuilder<Database, "messages">): Expression<SqlBool> =>
    eb(
      "feed_id",
      "in",
      db
        .selectFrom("feeds")
        .select("feeds.id")
        .where("feeds.environment_id", "=", feeds.environmentId)
        .where("feeds.identifier", "in", [...feeds.identifiers]),
    );
}

export interface FeedQuery {
  subscriberRef: string;
  channel: Channel;
  seen?: boolean;
  read?: boolean;
  payload?: Record<string, unknown>;
  feeds?: FeedsFilter;
  offset: number;
  limit: number;
}

/** A page of a subscriber's messages of one channel, newest first, and how many match in all. */
export async function feed(db: Db, query: FeedQuery) {
  let base = db
    .selectFrom("messages")
    .where("subscriber_ref", "=", query.subscriberRef)
    .where("channel", "=", query.channel);
  if (query.seen !== undefined) base = base.where("seen", "=", query.seen);
  if (query.read !== undefined) base = base.where("read", "=", query.read);
  if (query.payload && Object.keys(query.payload).length > 0)
    base = base.where(payloadContains(db, query.payload));
  if (query.feeds) base = base.where(inFeeds(db, query.feeds));
  const [rows, total] = await Promise.all([
    base
      .selectAll()
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(query.limit)
      .offset(query.offset)
      .execute(),
    countRows(base),
  ]);
  return { totalCount: total, messages: rows.map(messageFromRow) };
}

/** How many of the subscriber's messages of the channel match `seen`/`read`. */
export async function countMessages(
  db: Db,
  subscriberRef: string,
  channel: Channel,
  filter: { seen?: boolean; read?: boolean; feeds?: FeedsFilter },
): Promise<number> {
  let query = db
    .selectFrom("messages")
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", channel);
  if (filter.seen !== undefined) query = query.where("seen", "=", filter.seen);
  if (filter.read !== undefined) query = query.where("read", "=", filter.read);
  if (filter.feeds) query = query.where(inFeeds(db, filter.feeds));
  return countRows(query);
}

export interface MarkChanges {
  seen?: boolean;
  read?: boolean;
}

function markColumns(changes: MarkChanges, now: string) {
  return {
    ...(changes.seen !== undefined
      ? { seen: changes.seen, ...(changes.seen ? { last_seen_at: now } : {}) }
      : {}),
    ...(changes.read !== undefined
      ? { read: changes.read, ...(changes.read ? { last_read_at: now } : {}) }
      : {}),
    updated_at: now,
  };
}

/** Marks the subscriber's messages among `ids`; returns them as changed (others' ids match nothing). */
export async function markMessages(
  db: Db,
  subscriberRef: string,
  ids: string[],
  changes: MarkChanges,
  now: string,
): Promise<Message[]> {
  if (ids.length === 0) return [];
  const rows = await markMessagesUpdate(db, subscriberRef, ids, changes, now).execute();
  return rows.map(messageFromRow);
}

/** The statement markMessages runs: found by the ids' key, the subscriber only checked (checkOnly). */
export function markMessagesUpdate(
  db: Db,
  subscriberRef: string,
  ids: string[],
  changes: MarkChanges,
  now: string,
) {
  return db
    .updateTable("messages")
    .set(markColumns(changes, now))
    .where(checkOnly(db, "subscriber_ref", subscriberRef))
    .where("id", "in", ids)
    .returningAll();
}

/** Marks every message of the subscriber's channel that is not so yet; returns how many changed. */
export async function markAll(
  db: Db,
  subscriberRef: string,
  channel: Channel,
  changes: MarkChanges,
  now: string,
  feeds?: FeedsFilter,
): Promise<number> {
  const { seen, read } = changes;
  let update = db
    .updateTable("messages")
    .set(markColumns(changes, now))
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", channel);
  if (feeds) update = update.where(inFeeds(db, feeds));
  const result = await update
    // Those that differ in any of the columns the change sets (read implies seen: a seen but unread
    // message is changed by "read").
    .where((eb) =>
      eb.or([
        ...(seen !== undefined ? [eb("seen", "=", !seen)] : []),
        ...(read !== undefined ? [eb("read", "=", !read)] : []),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function findMessage(db: Db, environmentId: string, id: string) {
  const row = await db
    .selectFrom("messages")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? messageFromRow(row) : undefined;
}

export interface MessageFilter {
  channel?: Channel;
  subscriberRef?: string;
  transactionIds?: string[];
}

/** The environment's messages matching `filter`, unordered (listMessages pages them). */
export function messagesMatching(db: Db, environmentId: string, filter: MessageFilter) {
  // A transaction's messages are found through its trigger (engine/domain.ts).
  const transactionIds = filter.transactionIds?.length ? filter.transactionIds : undefined;
  let base =
    transactionIds === undefined
      ? db.selectFrom("messages").where("environment_id", "=", environmentId)
      : db
          .selectFrom("messages")
          .where("notification_id", "in", notificationsOfTransactions(db, environmentId, transactionIds))
          .where("transaction_id", "in", transactionIds);
  if (filter.channel !== undefined) base = base.where("channel", "=", filter.channel);
  if (filter.subscriberRef !== undefined) base = base.where("subscriber_ref", "=", filter.subscriberRef);
  return base;
}

export async function listMessages(
  db: Db,
  environmentId: string,
  filter: MessageFilter,
  page: { offset: number; limit: number },
) {
  const { rows, total } = await newestFirstPage(messagesMatching(db, environmentId, filter), page);
  return { totalCount: total, messages: rows.map(messageFromRow) };
}

/** Which messages a deletion takes: all conditions given must hold. */
interface MessageDeletion {
  id?: string;
  ids?: string[];
  transactionId?: string;
  subscriberRef?: string;
  channel?: Channel;
  feedId?: string;
}

/** The deletion of the environment's messages matching `where` (deleteMessages runs it). */
export function messagesToDelete(db: Db, environmentId: string, where: MessageDeletion) {
  let query = db.deleteFrom("messages");
  if (where.transactionId !== undefined)
    // A transaction's messages are found through its trigger (engine/domain.ts).
    query = query
      .where("notification_id", "in", notificationsOfTransactions(db, environmentId, [where.transactionId]))
      .where("transaction_id", "=", where.transactionId);
  else query = query.where(scope(db, "environment_id", environmentId, where.ids));
  if (where.feedId !== undefined) query = query.where("feed_id", "=", where.feedId);
  if (where.id !== undefined) query = query.where("id", "=", where.id);
  if (where.ids !== undefined) query = query.where("id", "in", where.ids);
  if (where.channel !== undefined) query = query.where("channel", "=", where.channel);
  if (where.subscriberRef !== undefined)
    query = query.where(scope(db, "subscriber_ref", where.subscriberRef, where.ids));
  return query;
}

/**
 * `column = value` as a statement's scope: what finds its rows, or, when a list of ids finds them
 * by their key, only a check on each (checkOnly).
 */
function scope(
  db: Db,
  column: "environment_id" | "subscriber_ref",
  value: string,
  ids: readonly string[] | undefined,
): Expression<SqlBool> {
  return ids === undefined ? sql<SqlBool>`${sql.ref(column)} = ${value}` : checkOnly(db, column, value);
}

/** Deletes the environment's messages matching; returns those deleted (for the events they raise). */
export async function deleteMessages(
  db: Db,
  environmentId: string,
  where: MessageDeletion,
): Promise<Message[]> {
  const query = messagesToDelete(db, environmentId, where);
  const rows = await query.returningAll().execute();
  return rows.map(messageFromRow);
}

/** Records the action a subscriber took on a message (its cta's action); undefined when not theirs. */
export async function setMessageAction(
  db: Db,
  subscriberRef: string,
  id: string,
  action: Record<string, unknown>,
  now: string,
): Promise<Message | undefined> {
  const row = await db
    .selectFrom("messages")
    .selectAll()
    .where("subscriber_ref", "=", subscriberRef)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) return undefined;
  const current = readJson<MessageCta>(row.cta);
  // The buttons stay: only the action taken changes.
  const cta = { ...current, action: { ...current.action, ...action } };
  const updated = await db
    .updateTable("messages")
    .set({ cta: writeJson(cta), updated_at: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return messageFromRow(updated);
}

export const SEVERITIES = ["high", "medium", "low", "none"] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * The subscriber's unread in-app messages that its inbox shows (neither archived nor snoozed), by
 * severity; one grouped count over `messages_inbox`.
 */
export async function unreadBySeverity(db: Db, subscriberRef: string): Promise<Record<Severity, number>> {
  const rows = await db
    .selectFrom("messages")
    .select(["severity", (eb) => eb.fn.countAll<number | string | bigint>().as("count")])
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", "in_app")
    .where("read", "=", false)
    .where("archived", "=", false)
    .where("snoozed_until", "is", null)
    .groupBy("severity")
    .execute();
  const counts: Record<Severity, number> = { high: 0, medium: 0, low: 0, none: 0 };
  for (const row of rows) {
    const severity = (SEVERITIES as readonly string[]).includes(row.severity)
      ? (row.severity as Severity)
      : "none";
    counts[severity] += Number(row.count);
  }
  return counts;
}

// ---------------------------------------------------------------- Novu's current inbox

/** Whose inbox: the subscriber (our id), and its environment, whose lists of tags its filters read. */
export interface InboxOwner {
  environmentId: string;
  subscriberRef: string;
}

/** One subscriber's in-app messages: what every query of the inbox starts from (`messages_inbox`). */
function inboxOf(db: Db, subscriberRef: string) {
  return db
    .selectFrom("messages")
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", "in_app");
}

/** A JSON path for SQLite's json functions: `["a", "b"]` → `$."a"."b"` (the keys hold no quote). */
const sqlitePath = (path: readonly string[]) => `$${path.map((key) => `."${key}"`).join("")}`;

/** `{a: {b: value}}` for the path `["a", "b"]`, as JSON text. */
const nestedAt = (path: readonly string[], value: unknown) =>
  writeJson(path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value));

/**
 * Holds when the value at `path` of the message's data is one of `values`, or is a list holding one
 * (the client's matcher: strict equality, `1` is not `"1"`; an object is never a match).
 */
function dataValueIsOneOf(sqlite: boolean, path: readonly string[], values: readonly DataValue[]) {
  if (sqlite) {
    // json_each walks a list's items, or yields the one value that is not a list; an object is
    // never a match, as the client compares objects by identity.
    const typed = (value: DataValue) =>
      value === null
        ? sql<SqlBool>`v.type = 'null'`
        : typeof value === "boolean"
          ? sql<SqlBool>`v.type = ${value ? "true" : "false"}`
          : typeof value === "number"
            ? sql<SqlBool>`v.type in ('integer', 'real') and v.value = ${value}`
            : sql<SqlBool>`v.type = 'text' and v.value = ${value}`;
    return sql<SqlBool>`(${sql.join(
      values.map(
        (value) => sql`(json_type(messages.data, ${sqlitePath(path)}) not in ('object')
          and exists (select 1 from json_each(messages.data, ${sqlitePath(path)}) as v where ${typed(value)}))`,
      ),
      sql` or `,
    )})`;
  }
  // jsonb containment, the data read once for all of them: `{a: {b: v}}` holds for the value v
  // itself, `{a: {b: [v]}}` for a list holding it (a list inside the list does not hold it, as the
  // client's matcher has it). Through text: a parameter the server types as jsonb is JSON-encoded
  // again by the driver.
  const shapes = values.flatMap((value) => [nestedAt(path, value), nestedAt(path, [value])]);
  return sql<SqlBool>`(messages.data::jsonb @> any(array[${sql.join(
    shapes.map((shape) => sql`${shape}::text::jsonb`),
  )}]))`;
}

/**
 * Holds when the message has one of the tags: its list of tags (`tag_set`, in `messages_inbox`) is
 * one of the environment's lists (`message_tag_sets`, migration 0016) that holds one. The lists are
 * read once per statement; each message is then decided in the index, with no JSON of its own read.
 */
function hasOneOfTags(sqlite: boolean, environmentId: string, tags: readonly string[]) {
  const holds = (tag: string) =>
    sqlite
      ? sql<SqlBool>`exists (select 1 from json_each(message_tag_sets.tags) as t where t.type = 'text' and t.value = ${tag})`
      : sql<SqlBool>`message_tag_sets.tags::jsonb @> ${writeJson([tag])}::text::jsonb`;
  const lists = sql`select message_tag_sets.id from message_tag_sets
    where message_tag_sets.environment_id = ${environmentId} and (${sql.join(tags.map(holds), sql` or `)})`;
  // PostgreSQL: an array made once (an InitPlan), which each index entry is compared with.
  return sqlite
    ? sql<SqlBool>`messages.tag_set in (${lists})`
    : sql<SqlBool>`messages.tag_set = any(array(${lists}))`;
}

/** Whether the filter is decided in `messages_inbox` alone: every filter but one on `data`. */
const decidedInIndex = (filter: NotificationFilter) => (filter.data ?? []).length === 0;

/**
 * The filter as a predicate on `messages`. A snoozed message is hidden unless the filter asks for the
 * snoozed, or `anySnooze` (what acts on messages by id or deletes them all) includes it either way.
 */
export function filterPredicate(
  db: Db,
  environmentId: string,
  filter: NotificationFilter,
  anySnooze = false,
) {
  const sqlite = dialectOf(db) === "sqlite";
  return (eb: ExpressionBuilder<Database, "messages">): Expression<SqlBool> => {
    const all: Expression<SqlBool>[] = [];
    if (filter.read !== undefined) all.push(eb("read", "=", filter.read));
    if (filter.seen !== undefined) all.push(eb("seen", "=", filter.seen));
    if (filter.archived !== undefined) all.push(eb("archived", "=", filter.archived));
    if (filter.snoozed === true) all.push(eb("snoozed_until", "is not", null));
    else if (filter.snoozed === false || !anySnooze) all.push(eb("snoozed_until", "is", null));
    if (filter.severity) all.push(eb("severity", "in", filter.severity));
    if (filter.createdGte !== undefined)
      all.push(eb("created_at", ">=", new Date(filter.createdGte).toISOString()));
    if (filter.createdLte !== undefined)
      all.push(eb("created_at", "<=", new Date(filter.createdLte).toISOString()));
    for (const group of filter.tags ?? []) all.push(hasOneOfTags(sqlite, environmentId, group));
    for (const condition of filter.data ?? []) {
      for (const group of condition.groups) {
        const oneOf = dataValueIsOneOf(sqlite, condition.path, group);
        // PostgreSQL has no statistics for a JSON predicate and guesses it keeps one row in 200: a
        // page would then rather sort every row the flags leave than walk the index in its order
        // until the page is full. coalesce() (null is no match anyway) makes its guess one in two.
        all.push(sqlite ? oneOf : sql<SqlBool>`coalesce(${oneOf}, false)`);
      }
    }
    return eb.and(all);
  };
}

/** Where a page starts: after the message `after` (newest first), skipping `offset` more. */
export interface PageQuery {
  limit: number;
  offset: number;
  after?: { createdAt: string; id: string };
}

/**
 * The statement of a page (see inboxPage): the subscriber's range of `messages_inbox`, in its order,
 * one row more than the page.
 */
export function inboxPageQuery(db: Db, owner: InboxOwner, filter: NotificationFilter, page: PageQuery) {
  let query = inboxOf(db, owner.subscriberRef).where(filterPredicate(db, owner.environmentId, filter));
  const after = page.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb("created_at", "<", after.createdAt),
        eb.and([eb("created_at", "=", after.createdAt), eb("id", "<", after.id)]),
      ]),
    );
  }
  return query
    .selectAll()
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(page.limit + 1)
    .offset(page.offset);
}

/**
 * A page of the subscriber's in-app messages matching the filter, newest first, and whether more
 * follow: one more row than the page is read, never a count.
 */
export async function inboxPage(
  db: Db,
  owner: InboxOwner,
  filter: NotificationFilter,
  page: PageQuery,
): Promise<{ messages: Message[]; hasMore: boolean }> {
  const rows = await inboxPageQuery(db, owner, filter, page).execute();
  return { messages: rows.slice(0, page.limit).map(messageFromRow), hasMore: rows.length > page.limit };
}

type Count = number | string | bigint;

/** A statement of counts: one row, a column per filter it counts (`c0`, `c1`… by the filter's place). */
export type CountStatement = SelectQueryBuilder<Database, never, Record<string, Count>>;

/**
 * The statements of the counts of several filters (see countInbox), at most two: the filters decided
 * in the index counted together, in one read of the subscriber's range of `messages_inbox` (one
 * `count(*) filter (where …)` each); and the filters on `data`, which read the rows themselves,
 * each in a subquery of one statement that reads only the rows its other conditions leave.
 */
export function countInboxQueries(
  db: Db,
  owner: InboxOwner,
  filters: readonly NotificationFilter[],
): CountStatement[] {
  const numbered = filters.map((filter, i) => ({ filter, name: `c${i}` }));
  const inIndex = numbered.filter(({ filter }) => decidedInIndex(filter));
  const onRows = numbered.filter(({ filter }) => !decidedInIndex(filter));
  const statements: CountStatement[] = [];
  if (inIndex.length > 0) {
    statements.push(
      inboxOf(db, owner.subscriberRef).select((eb) =>
        inIndex.map(({ filter, name }) =>
          eb.fn
            .countAll<Count>()
            .filterWhere(filterPredicate(db, owner.environmentId, filter))
            .as(name),
        ),
      ) as unknown as CountStatement,
    );
  }
  if (onRows.length > 0) {
    statements.push(
      db.selectNoFrom(() =>
        onRows.map(({ filter, name }) =>
          inboxOf(db, owner.subscriberRef)
            .where(filterPredicate(db, owner.environmentId, filter))
            .select((eb) => eb.fn.countAll<Count>().as("n"))
            .as(name),
        ),
      ) as unknown as CountStatement,
    );
  }
  return statements;
}

/**
 * How many of the subscriber's in-app messages match each filter, in order: the statements of
 * countInboxQueries side by side (on PostgreSQL, two connections at most: the index's read and the
 * data filters' run on two cores at once).
 */
export async function countInbox(
  db: Db,
  owner: InboxOwner,
  filters: readonly NotificationFilter[],
): Promise<number[]> {
  const rows = await Promise.all(
    countInboxQueries(db, owner, filters).map((statement) => statement.executeTakeFirstOrThrow()),
  );
  const counts: Record<string, Count> = Object.assign({}, ...rows);
  return filters.map((_, i) => Number(counts[`c${i}`] ?? 0));
}

/** One of the subscriber's in-app messages, or undefined when it is not theirs (or not in-app). */
export async function findInboxMessage(db: Db, subscriberRef: string, id: string) {
  const row = await inboxOf(db, subscriberRef).selectAll().where("id", "=", id).executeTakeFirst();
  return row ? messageFromRow(row) : undefined;
}

/** A change of the flags: what each column becomes (a function of the row's own for `first_seen_at`). */
export interface FlagChanges {
  seen?: boolean;
  read?: boolean;
  archived?: boolean;
}

/**
 * The columns a change of flags writes, as Novu's inbox changes them: read and archived imply seen;
 * archived implies read; unread and unseen take the message out of the archive; the moments follow
 * (first seen is kept once set).
 */
function flagColumns(changes: FlagChanges, now: string) {
  const { seen, read, archived } = changes;
  return {
    ...(seen !== undefined
      ? {
          seen,
          last_seen_at: seen ? now : null,
          ...(seen ? { first_seen_at: sql<string>`coalesce(first_seen_at, ${now})` } : {}),
        }
      : {}),
    // A message read (or archived) already keeps the moment it was.
    ...(read !== undefined
      ? {
          read,
          last_read_at: read
            ? sql<string>`case when read then coalesce(last_read_at, ${now}) else ${now} end`
            : null,
        }
      : {}),
    ...(archived !== undefined
      ? {
          archived,
          archived_at: archived
            ? sql<string>`case when archived then coalesce(archived_at, ${now}) else ${now} end`
            : null,
        }
      : {}),
    updated_at: now,
  };
}

/** Changes one of the subscriber's messages; undefined when it is not theirs. */
export async function setInboxFlags(
  db: Db,
  subscriberRef: string,
  id: string,
  changes: FlagChanges,
  now: string,
): Promise<Message | undefined> {
  const row = await db
    .updateTable("messages")
    .set(flagColumns(changes, now))
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", "in_app")
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? messageFromRow(row) : undefined;
}

/**
 * Changes every message of the subscriber that matches `filter` and `ids` (when given) and is not
 * so already (`differs`: the messages whose flag is not yet the new value); returns how many changed.
 */
export async function setInboxFlagsWhere(
  db: Db,
  owner: InboxOwner,
  where: InboxFlagsWhere,
  changes: FlagChanges,
  now: string,
): Promise<number> {
  const result = await inboxFlagsUpdate(db, owner, where, changes, now).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface InboxFlagsWhere {
  filter: NotificationFilter;
  ids?: string[];
  anySnooze?: boolean;
  differs: keyof FlagChanges;
}

/** The statement setInboxFlagsWhere runs. */
export function inboxFlagsUpdate(
  db: Db,
  owner: InboxOwner,
  where: InboxFlagsWhere,
  changes: FlagChanges,
  now: string,
) {
  const target = changes[where.differs];
  if (target === undefined) throw new Error(`the change sets no ${where.differs}`);
  return db
    .updateTable("messages")
    .set(flagColumns(changes, now))
    .where(ownInApp(db, owner.subscriberRef, where.ids))
    .where(where.differs, "=", !target)
    .where(filterPredicate(db, owner.environmentId, where.filter, where.anySnooze));
}

/**
 * The subscriber's in-app messages, of `ids` when given: then found by their key, the subscriber
 * only checked (scope), so a few ids never read all the subscriber's index entries.
 */
function ownInApp(db: Db, subscriberRef: string, ids: string[] | undefined) {
  return (eb: ExpressionBuilder<Database, "messages">) =>
    eb.and([
      scope(db, "subscriber_ref", subscriberRef, ids),
      eb("channel", "=", "in_app"),
      ...(ids === undefined ? [] : [eb("id", "in", ids)]),
    ]);
}

/** Deletes the subscriber's messages matching the filter (and `ids`, when given); returns how many. */
export async function deleteInboxWhere(
  db: Db,
  owner: InboxOwner,
  where: { filter: NotificationFilter; ids?: string[] },
): Promise<number> {
  const result = await inboxDeletion(db, owner, where).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The statement deleteInboxWhere runs. */
export function inboxDeletion(
  db: Db,
  owner: InboxOwner,
  where: { filter: NotificationFilter; ids?: string[] },
) {
  return db
    .deleteFrom("messages")
    .where(ownInApp(db, owner.subscriberRef, where.ids))
    .where(filterPredicate(db, owner.environmentId, where.filter, true));
}

/** Snoozes one of the subscriber's messages until `until` (or wakes it: null); undefined when not theirs. */
export async function setSnooze(
  db: Db,
  subscriberRef: string,
  id: string,
  until: string | null,
  now: string,
  deliveredAt?: string[],
): Promise<Message | undefined> {
  const row = await db
    .updateTable("messages")
    .set({
      snoozed_until: until,
      ...(deliveredAt ? { delivered_at: writeJson(deliveredAt) } : {}),
      updated_at: now,
    })
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", "in_app")
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? messageFromRow(row) : undefined;
}

/**
 * Brings back a message whose snooze ends at `until`, as a new delivery, as Novu does: unread,
 * unseen, out of the archive, delivered again `now` and dated `now` (the newest of the feed; the
 * first delivery stays in `delivered_at`). Nothing when it was woken, snoozed again or deleted meanwhile (its
 * `snoozed_until` is no longer `until`).
 */
export async function wakeSnoozed(
  db: Db,
  id: string,
  until: string,
  now: string,
): Promise<Message | undefined> {
  const row = await db.selectFrom("messages").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row || row.snoozed_until === null) return undefined;
  if (Date.parse(readTimestamp(row.snoozed_until)) !== Date.parse(until)) return undefined;
  const delivered = [...readJson<string[]>(row.delivered_at), now];
  const woken = await db
    .updateTable("messages")
    .set({
      ...flagColumns({ seen: false, read: false, archived: false }, now),
      snoozed_until: null,
      delivered_at: writeJson(delivered),
      created_at: now,
    })
    .where("id", "=", id)
    .where("snoozed_until", "=", until)
    .returningAll()
    .executeTakeFirst();
  return woken ? messageFromRow(woken) : undefined;
}

/** Writes a message's cta (its action taken or reverted); undefined when not the subscriber's. */
export async function setInboxCta(
  db: Db,
  subscriberRef: string,
  id: string,
  cta: MessageCta,
  now: string,
): Promise<Message | undefined> {
  const row = await db
    .updateTable("messages")
    .set({ cta: writeJson(cta), updated_at: now })
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", "in_app")
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? messageFromRow(row) : undefined;
}
