import type { Kysely, Selectable } from "kysely";
import type { Database, TopicsTable } from "../store/schema.ts";
import { countRows, countUpTo, dialectOf, readTimestamp } from "../store/values.ts";
import type { Topic, TopicMember } from "./domain.ts";

type Db = Kysely<Database>;

function toTopic(row: Selectable<TopicsTable>): Topic {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    key: row.key,
    name: row.name,
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** Inserts the topic; undefined when the environment already has one with its key. */
export async function insertTopic(db: Db, topic: Omit<Topic, "createdAt" | "updatedAt">, now: string) {
  const row = await db
    .insertInto("topics")
    .values({
      id: topic.id,
      organization_id: topic.organizationId,
      environment_id: topic.environmentId,
      key: topic.key,
      name: topic.name,
      created_at: now,
      updated_at: now,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toTopic(row) : undefined;
}

/**
 * The topic, or undefined. Inside a transaction on PostgreSQL, `lock` takes its row: `share` while
 * members are added or removed (those may run side by side), `update` to delete it (alone).
 */
export async function findTopic(db: Db, environmentId: string, key: string, lock?: "share" | "update") {
  let query = db
    .selectFrom("topics")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("key", "=", key);
  if (lock && dialectOf(db) === "postgres") query = lock === "share" ? query.forShare() : query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? toTopic(row) : undefined;
}

export async function topicExists(db: Db, environmentId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom("topics")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listTopics(
  db: Db,
  environmentId: string,
  list: { offset: number; limit: number; key?: string | undefined },
) {
  let base = db.selectFrom("topics").where("environment_id", "=", environmentId);
  if (list.key !== undefined) base = base.where("key", "=", list.key);
  const [rows, totalCount] = await Promise.all([
    base.selectAll().orderBy("created_at").orderBy("id").limit(list.limit).offset(list.offset).execute(),
    countRows(base),
  ]);
  return { totalCount, topics: rows.map(toTopic) };
}

/** The subscriberIds of each topic's members, in keyset (fan-out) order. */
export async function memberIdsOf(db: Db, topicIds: readonly string[]) {
  const members = new Map<string, string[]>(topicIds.map((id) => [id, []]));
  if (topicIds.length === 0) return members;
  const rows = await db
    .selectFrom("topic_subscribers")
    .select(["topic_id", "subscriber_id"])
    .where("topic_id", "in", topicIds)
    .orderBy("topic_id")
    .orderBy("subscriber_ref")
    .execute();
  for (const row of rows) members.get(row.topic_id)?.push(row.subscriber_id);
  return members;
}

export async function renameTopic(db: Db, environmentId: string, key: string, name: string, now: string) {
  const row = await db
    .updateTable("topics")
    .set({ name, updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("key", "=", key)
    .returningAll()
    .executeTakeFirst();
  return row ? toTopic(row) : undefined;
}

export async function deleteTopic(db: Db, id: string): Promise<void> {
  await db.deleteFrom("topics").where("id", "=", id).execute();
}

/** The topic's members, counted up to `limit` (a read bounded by it, on the membership's key). */
export function countMembersUpTo(db: Db, topicId: string, limit: number): Promise<number> {
  return countUpTo(db, db.selectFrom("topic_subscribers").where("topic_id", "=", topicId), limit);
}

export async function countMembers(db: Db, topicId: string): Promise<number> {
  return countRows(db.selectFrom("topic_subscribers").where("topic_id", "=", topicId));
}

const CHUNK = 500;

/** Adds the members that are not in the topic yet (a member added twice stays once). */
export async function addMembers(
  db: Db,
  topic: Topic,
  members: readonly TopicMember[],
  now: string,
): Promise<void> {
  for (let i = 0; i < members.length; i += CHUNK) {
    await db
      .insertInto("topic_subscribers")
      .values(
        members.slice(i, i + CHUNK).map((member) => ({
          topic_id: topic.id,
          subscriber_ref: member.subscriberRef,
          environment_id: topic.environmentId,
          subscriber_id: member.subscriberId,
          created_at: now,
        })),
      )
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  }
}

export async function removeMembers(
  db: Db,
  topicId: string,
  subscriberRefs: readonly string[],
): Promise<void> {
  for (let i = 0; i < subscriberRefs.length; i += CHUNK) {
    await db
      .deleteFrom("topic_subscribers")
      .where("topic_id", "=", topicId)
      .where("subscriber_ref", "in", subscriberRefs.slice(i, i + CHUNK))
      .execute();
  }
}

export async function isMember(db: Db, topicId: string, subscriberRef: string): Promise<boolean> {
  const row = await db
    .selectFrom("topic_subscribers")
    .select("subscriber_ref")
    .where("topic_id", "=", topicId)
    .where("subscriber_ref", "=", subscriberRef)
    .executeTakeFirst();
  return row !== undefined;
}

/** The statement of one fan-out page (exported so a test can check its plan). */
export function pageMembersQuery(db: Db, topicId: string, after: string, limit: number) {
  return db
    .selectFrom("topic_subscribers")
    .select(["subscriber_ref", "subscriber_id"])
    .where("topic_id", "=", topicId)
    .where("subscriber_ref", ">", after)
    .orderBy("subscriber_ref")
    .limit(limit);
}

/**
 * Up to `limit` members after `after` (a subscriber ref; "" for the start), in primary-key order:
 * one range of the (topic_id, subscriber_ref) index per page, however large the topic.
 */
export async function pageMembers(
  db: Db,
  topicId: string,
  after: string,
  limit: number,
): Promise<TopicMember[]> {
  const rows = await pageMembersQuery(db, topicId, after, limit).execute();
  return rows.map((row) => ({ subscriberRef: row.subscriber_ref, subscriberId: row.subscriber_id }));
}
