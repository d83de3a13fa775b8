import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from "kysely";
import { type Message, type MessageCta, messageFromRow } from "../engine/domain.ts";
import type { Database } from "../store/schema.ts";
import { countRows, dialectOf, readJson, writeJson } from "../store/values.ts";
import type { Channel } from "../workflows/domain.ts";

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

export interface FeedQuery {
  subscriberRef: string;
  channel: Channel;
  seen?: boolean;
  read?: boolean;
  payload?: Record<string, unknown>;
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
  filter: { seen?: boolean; read?: boolean },
): Promise<number> {
  let query = db
    .selectFrom("messages")
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", channel);
  if (filter.seen !== undefined) query = query.where("seen", "=", filter.seen);
  if (filter.read !== undefined) query = query.where("read", "=", filter.read);
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
  const rows = await db
    .updateTable("messages")
    .set(markColumns(changes, now))
    .where("subscriber_ref", "=", subscriberRef)
    .where("id", "in", ids)
    .returningAll()
    .execute();
  return rows.map(messageFromRow);
}

/** Marks every message of the subscriber's channel that is not so yet; returns how many changed. */
export async function markAll(
  db: Db,
  subscriberRef: string,
  channel: Channel,
  changes: MarkChanges,
  now: string,
): Promise<number> {
  const { seen, read } = changes;
  const result = await db
    .updateTable("messages")
    .set(markColumns(changes, now))
    .where("subscriber_ref", "=", subscriberRef)
    .where("channel", "=", channel)
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

export async function listMessages(
  db: Db,
  environmentId: string,
  filter: MessageFilter,
  page: { offset: number; limit: number },
) {
  let base = db.selectFrom("messages").where("environment_id", "=", environmentId);
  if (filter.channel !== undefined) base = base.where("channel", "=", filter.channel);
  if (filter.subscriberRef !== undefined) base = base.where("subscriber_ref", "=", filter.subscriberRef);
  if (filter.transactionIds?.length) base = base.where("transaction_id", "in", filter.transactionIds);
  const [rows, total] = await Promise.all([
    base
      .selectAll()
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    countRows(base),
  ]);
  return { totalCount: total, messages: rows.map(messageFromRow) };
}

/** Deletes the environment's messages matching; returns those deleted (for the events they raise). */
export async function deleteMessages(
  db: Db,
  environmentId: string,
  where: { id?: string; ids?: string[]; transactionId?: string; subscriberRef?: string; channel?: Channel },
): Promise<Message[]> {
  let query = db.deleteFrom("messages").where("environment_id", "=", environmentId);
  if (where.id !== undefined) query = query.where("id", "=", where.id);
  if (where.ids !== undefined) query = query.where("id", "in", where.ids);
  if (where.channel !== undefined) query = query.where("channel", "=", where.channel);
  if (where.transactionId !== undefined) query = query.where("transaction_id", "=", where.transactionId);
  if (where.subscriberRef !== undefined) query = query.where("subscriber_ref", "=", where.subscriberRef);
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
  const cta = { ...readJson<MessageCta>(row.cta), action };
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
