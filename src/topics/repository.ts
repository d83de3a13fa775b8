import { type Kysely, type Selectable, sql } from "kysely";
import { type CursorRequest, cursorPage } from "../store/cursor-page.ts";
import type { Database, TopicsTable } from "../store/schema.ts";
import {
  countRows,
  countUpTo,
  dialectOf,
  readBool,
  readJson,
  readTimestamp,
  writeJson,
} from "../store/values.ts";
import type { Channel } from "../workflows/domain.ts";
import {
  defaultSubscriptionIdentifier,
  type SubscriptionPreference,
  type Topic,
  type TopicMember,
  type TopicSubscription,
} from "./domain.ts";

type Db = Kysely<Database>;

function toTopic(row: Selectable<TopicsTable>): Topic {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    key: row.key,
    name: row.name,
    data: readJson<Record<string, unknown>>(row.data),
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
      data: writeJson(topic.data),
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

/** Sets the topic's name and/or data; undefined when the environment has no such topic. */
export async function updateTopic(
  db: Db,
  environmentId: string,
  key: string,
  change: { name?: string | undefined; data?: Record<string, unknown> | undefined },
  now: string,
) {
  const row = await db
    .updateTable("topics")
    .set({
      ...(change.name === undefined ? {} : { name: change.name }),
      ...(change.data === undefined ? {} : { data: writeJson(change.data) }),
      updated_at: now,
    })
    .where("environment_id", "=", environmentId)
    .where("key", "=", key)
    .returningAll()
    .executeTakeFirst();
  return row ? toTopic(row) : undefined;
}

export type TopicOrder = "_id" | "createdAt" | "updatedAt";

/** One /v2 page of the environment's topics (src/store/cursor-page.ts); `key` exact, `name` contained (any case). */
export async function pageTopics(
  db: Db,
  environmentId: string,
  filters: { key?: string | undefined; name?: string | undefined },
  order: TopicOrder,
  request: CursorRequest,
) {
  let query = db.selectFrom("topics").selectAll().where("environment_id", "=", environmentId);
  if (filters.key !== undefined) query = query.where("key", "=", filters.key);
  if (filters.name !== undefined && filters.name !== "") {
    const lower = sql.raw(dialectOf(db) === "sqlite" ? "unicode_lower" : "lower");
    const pattern = `%${filters.name.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(sql<boolean>`${lower}(name) like ${pattern} escape '\\'`);
  }
  // `_id` is creation order (ours are random within their second).
  const column = order === "updatedAt" ? "updated_at" : "created_at";
  const page = await cursorPage(
    db,
    query,
    { table: "topics", sort: column, id: "id", sortRef: column, idRef: "id" },
    request,
    (row) => row.id,
  );
  return { ...page, rows: page.rows.map(toTopic) };
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

/**
 * Adds the members that are not in the topic yet (a member added twice stays once), each a
 * subscription with the default identifier and the id given.
 */
export async function addMembers(
  db: Db,
  topic: Topic,
  members: readonly (TopicMember & { id: string })[],
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
          id: member.id,
          identifier: defaultSubscriptionIdentifier(topic.key, member.subscriberId),
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

// ---------------------------------------------------------------- subscriptions

type MembershipRow = Selectable<Database["topic_subscribers"]>;

function toSubscription(topic: Topic, row: MembershipRow): TopicSubscription {
  return {
    id: row.id,
    identifier: row.identifier,
    name: row.name,
    topic,
    subscriberRef: row.subscriber_ref,
    subscriberId: row.subscriber_id,
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at ?? row.created_at),
  };
}

/** The subscriber's subscription to the topic, or undefined. */
export async function findSubscription(db: Db, topic: Topic, subscriberRef: string) {
  const row = await db
    .selectFrom("topic_subscribers")
    .selectAll()
    .where("topic_id", "=", topic.id)
    .where("subscriber_ref", "=", subscriberRef)
    .executeTakeFirst();
  return row ? toSubscription(topic, row) : undefined;
}

/** The topic's subscription with this identifier or id, whoever it belongs to; or undefined. */
export async function findSubscriptionByName(db: Db, topic: Topic, identifierOrId: string) {
  const row = await db
    .selectFrom("topic_subscribers")
    .selectAll()
    .where("topic_id", "=", topic.id)
    .where((eb) => eb.or([eb("identifier", "=", identifierOrId), eb("id", "=", identifierOrId)]))
    .executeTakeFirst();
  return row ? toSubscription(topic, row) : undefined;
}

/** Subscriptions with their topic, as the joined query reads them. */
function subscriptionsQuery(db: Db, environmentId: string) {
  return db
    .selectFrom("topic_subscribers as s")
    .innerJoin("topics as t", "t.id", "s.topic_id")
    .selectAll("s")
    .select([
      "t.organization_id as topic_organization_id",
      "t.key as topic_key",
      "t.name as topic_name",
      "t.data as topic_data",
      "t.created_at as topic_created_at",
      "t.updated_at as topic_updated_at",
    ])
    .where("s.environment_id", "=", environmentId);
}

type JoinedRow = MembershipRow & {
  topic_organization_id: string;
  topic_key: string;
  topic_name: string;
  topic_data: string;
  topic_created_at: string | Date;
  topic_updated_at: string | Date;
};

const joinedSubscription = (row: JoinedRow) =>
  toSubscription(
    {
      id: row.topic_id,
      organizationId: row.topic_organization_id,
      environmentId: row.environment_id,
      key: row.topic_key,
      name: row.topic_name,
      data: readJson<Record<string, unknown>>(row.topic_data),
      createdAt: readTimestamp(row.topic_created_at),
      updatedAt: readTimestamp(row.topic_updated_at),
    },
    row,
  );

/** The subscriber's subscriptions, in any topic of the environment, with this identifier or id. */
export async function findSubscriberSubscriptions(
  db: Db,
  environmentId: string,
  subscriberRef: string,
  identifierOrId: string,
): Promise<TopicSubscription[]> {
  const rows = await subscriptionsQuery(db, environmentId)
    .where("s.subscriber_ref", "=", subscriberRef)
    .where((eb) => eb.or([eb("s.identifier", "=", identifierOrId), eb("s.id", "=", identifierOrId)]))
    .orderBy("s.topic_id")
    .execute();
  return rows.map(joinedSubscription);
}

/**
 * One /v2 page of subscriptions (src/store/cursor-page.ts), oldest or newest first, those of one
 * topic or of one subscriber (or both), a cursor naming a subscription by its id.
 */
export async function pageSubscriptions(
  db: Db,
  environmentId: string,
  filters: { topicId?: string | undefined; subscriberRef?: string | undefined },
  request: CursorRequest,
) {
  let query = subscriptionsQuery(db, environmentId);
  if (filters.topicId !== undefined) query = query.where("s.topic_id", "=", filters.topicId);
  if (filters.subscriberRef !== undefined)
    query = query.where("s.subscriber_ref", "=", filters.subscriberRef);
  const page = await cursorPage(
    db,
    query,
    { table: "topic_subscribers", sort: "created_at", id: "id", sortRef: "s.created_at", idRef: "s.id" },
    request,
    (row) => row.id,
  );
  return { ...page, rows: page.rows.map((row) => joinedSubscription(row as JoinedRow)) };
}

/** Whether the environment has a subscription with this id (a /v2 page's cursor). */
export async function subscriptionIdExists(db: Db, environmentId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom("topic_subscribers")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the environment has a topic with this id (a /v2 page's cursor). */
export async function topicIdExists(db: Db, environmentId: string, id: string): Promise<boolean> {
  return topicExists(db, environmentId, id);
}

/**
 * Inserts the subscription unless the subscriber has one to the topic already or its identifier is
 * taken in the topic; undefined then (the caller reads which).
 */
export async function insertSubscription(
  db: Db,
  topic: Topic,
  subscription: { id: string; identifier: string; name: string; subscriberRef: string; subscriberId: string },
  now: string,
) {
  const row = await db
    .insertInto("topic_subscribers")
    .values({
      topic_id: topic.id,
      subscriber_ref: subscription.subscriberRef,
      environment_id: topic.environmentId,
      subscriber_id: subscription.subscriberId,
      created_at: now,
      id: subscription.id,
      identifier: subscription.identifier,
      name: subscription.name,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toSubscription(topic, row) : undefined;
}

export async function renameSubscription(
  db: Db,
  topicId: string,
  subscriberRef: string,
  name: string,
  now: string,
) {
  await db
    .updateTable("topic_subscribers")
    .set({ name, updated_at: now })
    .where("topic_id", "=", topicId)
    .where("subscriber_ref", "=", subscriberRef)
    .execute();
}

/** Records that the subscription changed (its preferences). */
export async function touchSubscription(db: Db, subscription: TopicSubscription, now: string) {
  await db
    .updateTable("topic_subscribers")
    .set({ updated_at: now })
    .where("topic_id", "=", subscription.topic.id)
    .where("subscriber_ref", "=", subscription.subscriberRef)
    .execute();
}

// ---------------------------------------------------------------- subscription preferences

type PreferenceRow = Selectable<Database["topic_subscription_preferences"]>;

function toSubscriptionPreference(
  row: Pick<PreferenceRow, "workflow_id" | "enabled" | "channels" | "condition">,
) {
  const preference: SubscriptionPreference = {
    workflowId: row.workflow_id,
    enabled: readBool(row.enabled),
    channels: readJson<Partial<Record<Channel, boolean>>>(row.channels),
  };
  if (row.condition !== "") preference.condition = readJson<unknown>(row.condition);
  return preference;
}

/** The subscription's preferences by workflow id; all of them, or those of `workflowIds`. */
export async function findSubscriptionPreferences(
  db: Db,
  topicId: string,
  subscriberRef: string,
  workflowIds?: readonly string[],
): Promise<Map<string, SubscriptionPreference>> {
  if (workflowIds?.length === 0) return new Map();
  let query = db
    .selectFrom("topic_subscription_preferences")
    .select(["workflow_id", "enabled", "channels", "condition"])
    .where("topic_id", "=", topicId)
    .where("subscriber_ref", "=", subscriberRef);
  if (workflowIds) query = query.where("workflow_id", "in", workflowIds);
  const rows = await query.orderBy("created_at").orderBy("workflow_id").execute();
  return new Map(rows.map((row) => [row.workflow_id, toSubscriptionPreference(row)]));
}

/** One workflow's preferences of the topic's members among `subscriberRefs` (a fan-out page). */
export async function findMembersPreferences(
  db: Db,
  topicId: string,
  workflowId: string,
  subscriberRefs: readonly string[],
): Promise<Map<string, SubscriptionPreference>> {
  const found = new Map<string, SubscriptionPreference>();
  for (let i = 0; i < subscriberRefs.length; i += CHUNK) {
    const rows = await db
      .selectFrom("topic_subscription_preferences")
      .select(["subscriber_ref", "workflow_id", "enabled", "channels", "condition"])
      .where("topic_id", "=", topicId)
      .where("workflow_id", "=", workflowId)
      .where("subscriber_ref", "in", subscriberRefs.slice(i, i + CHUNK))
      .execute();
    for (const row of rows) found.set(row.subscriber_ref, toSubscriptionPreference(row));
  }
  return found;
}

export async function saveSubscriptionPreference(
  db: Db,
  subscription: TopicSubscription,
  preference: SubscriptionPreference,
  now: string,
): Promise<void> {
  await db
    .insertInto("topic_subscription_preferences")
    .values({
      topic_id: subscription.topic.id,
      subscriber_ref: subscription.subscriberRef,
      workflow_id: preference.workflowId,
      environment_id: subscription.topic.environmentId,
      enabled: preference.enabled,
      channels: writeJson(preference.channels),
      condition: preference.condition === undefined ? "" : writeJson(preference.condition),
      created_at: now,
      updated_at: now,
    })
    .onConflict((conflict) =>
      conflict.columns(["topic_id", "subscriber_ref", "workflow_id"]).doUpdateSet((eb) => ({
        enabled: eb.ref("excluded.enabled"),
        channels: eb.ref("excluded.channels"),
        condition: eb.ref("excluded.condition"),
        updated_at: eb.ref("excluded.updated_at"),
      })),
    )
    .execute();
}

/** Removes every preference of the subscription (before it is given a new set). */
export async function clearSubscriptionPreferences(db: Db, subscription: TopicSubscription): Promise<void> {
  await db
    .deleteFrom("topic_subscription_preferences")
    .where("topic_id", "=", subscription.topic.id)
    .where("subscriber_ref", "=", subscription.subscriberRef)
    .execute();
}
