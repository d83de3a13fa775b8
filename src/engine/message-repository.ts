import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { pipelined } from "../store/pipeline.ts";
import { runPrepared, runPreparedRows, slot } from "../store/prepared.ts";
import type { Database } from "../store/schema.ts";
import { writeJson } from "../store/values.ts";
import { type Message, messageFromRow } from "./domain.ts";

type Db = Kysely<Database>;

/**
 * The id of a list of tags in `message_tag_sets` (migration 0017): the first 32 hex digits of the
 * SHA-256 of its JSON text; '' for no tags. The inbox's tag filters look for these ids in the index.
 */
export function tagSetId(tagsJson: string): string {
  if (tagsJson === "[]") return "";
  return createHash("sha256").update(tagsJson, "utf8").digest("hex").slice(0, 32);
}

/** Keeps a list of tags in the environment's `message_tag_sets`, once (see tagSetId). */
function keepTagSet(db: Db, environmentId: string, id: string, tags: string) {
  return runPrepared(
    db,
    "keep tag set",
    () =>
      db
        .insertInto("message_tag_sets")
        .values({ environment_id: slot("environmentId"), id: slot("id"), tags: slot("tags") })
        .onConflict((conflict) => conflict.doNothing()),
    { environmentId, id, tags },
  );
}

/**
 * Writes the job's message (one per job and provider: a chat step delivers through each provider the
 * subscriber has a webhook for), or nothing when the job wrote it already (a re-run after a crash):
 * returns the message as stored, and whether this call created it. Its list of tags is kept first
 * (in a transaction, in the same round trip on PostgreSQL), so a message is never in the index with
 * a tag set its filters cannot find.
 */
export async function insertMessage(
  db: Db,
  message: Message,
): Promise<{ message: Message; created: boolean }> {
  const tags = writeJson(message.tags);
  const tagSet = tagSetId(tags);
  const insert = (on: Db) => insertMessageRow(on, message, tags, tagSet);
  let row: Awaited<ReturnType<typeof insertMessageRow>>;
  if (tagSet === "") row = await insert(db);
  else if (db.isTransaction)
    [, row] = await pipelined(db, [(on) => keepTagSet(on, message.environmentId, tagSet, tags), insert]);
  else {
    await keepTagSet(db, message.environmentId, tagSet, tags);
    row = await insert(db);
  }
  if (row) return { message: messageFromRow(row), created: true };
  const existing = await db
    .selectFrom("messages")
    .selectAll()
    .where("job_id", "=", message.jobId)
    .where("provider_id", "=", message.providerId)
    .executeTakeFirstOrThrow();
  return { message: messageFromRow(existing), created: false };
}

function rowOf(message: Message, tags: string, tagSet: string) {
  return {
    id: message.id,
    organization_id: message.organizationId,
    environment_id: message.environmentId,
    notification_id: message.notificationId,
    job_id: message.jobId,
    workflow_id: message.workflowId,
    template_identifier: message.templateIdentifier,
    subscriber_ref: message.subscriberRef,
    subscriber_id: message.subscriberId,
    transaction_id: message.transactionId,
    channel: message.channel,
    content: message.content,
    subject: message.subject,
    cta: writeJson(message.cta),
    payload: writeJson(message.payload),
    provider_id: message.providerId,
    provider_message_id: message.providerMessageId,
    status: message.status,
    seen: message.seen,
    read: message.read,
    last_seen_at: message.lastSeenDate,
    last_read_at: message.lastReadDate,
    first_seen_at: message.firstSeenDate,
    archived: message.archived,
    archived_at: message.archivedAt,
    snoozed_until: message.snoozedUntil,
    delivered_at: writeJson(message.deliveredAt),
    tags,
    tag_set: tagSet,
    severity: message.severity,
    data: writeJson(message.data),
    avatar: message.avatar,
    feed_id: message.feedId,
    created_at: message.createdAt,
    updated_at: message.updatedAt,
  };
}

async function insertMessageRow(db: Db, message: Message, tags: string, tagSet: string) {
  const [row] = await runPreparedRows(db, "insert message", [rowOf(message, tags, tagSet)], (placeholders) =>
    db
      .insertInto("messages")
      .values(placeholders)
      .onConflict((conflict) => conflict.columns(["job_id", "provider_id"]).doNothing())
      .returningAll(),
  );
  return row;
}

// SQLite binds at most 32,766 parameters a statement; a message row has 35.
const MESSAGES_A_STATEMENT = 500;

/**
 * Writes the messages of jobs this transaction created (a trigger's, a fan-out batch's): none can
 * have been written before, so they go in as many rows a statement, without reading anything back.
 * Their lists of tags are kept first, each once.
 */
export async function insertNewMessages(db: Db, messages: readonly Message[]): Promise<void> {
  if (messages.length === 0) return;
  const rows = messages.map((message) => {
    const tags = writeJson(message.tags);
    return { message, tags, tagSet: tagSetId(tags) };
  });
  const tagSets = new Map<string, { environmentId: string; tagSet: string; tags: string }>();
  for (const { message, tags, tagSet } of rows)
    if (tagSet !== "")
      tagSets.set(`${message.environmentId}\u0000${tagSet}`, {
        environmentId: message.environmentId,
        tagSet,
        tags,
      });
  // In one order for every writer: two transactions keeping the same new lists wait for each other
  // in turn, never each for the other.
  for (const [, { environmentId, tagSet, tags }] of [...tagSets].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  ))
    await keepTagSet(db, environmentId, tagSet, tags);
  for (let i = 0; i < rows.length; i += MESSAGES_A_STATEMENT)
    await runPreparedRows(
      db,
      "insert new messages",
      rows
        .slice(i, i + MESSAGES_A_STATEMENT)
        .map(({ message, tags, tagSet }) => rowOf(message, tags, tagSet)),
      (placeholders) => db.insertInto("messages").values(placeholders),
    );
}

/** Deletes one message (one its job has just written, and takes back). */
export async function deleteMessage(db: Db, id: string): Promise<void> {
  await db.deleteFrom("messages").where("id", "=", id).execute();
}

/** The messages a job has delivered so far (a chat job: one per provider). */
export async function jobMessages(db: Db, jobId: string): Promise<Message[]> {
  const rows = await db.selectFrom("messages").selectAll().where("job_id", "=", jobId).execute();
  return rows.map(messageFromRow);
}

/** Deletes every message of the subscriber (it is being deleted); returns those deleted. */
export async function eraseSubscriberMessages(
  db: Db,
  environmentId: string,
  subscriberRef: string,
): Promise<Message[]> {
  const rows = await db
    .deleteFrom("messages")
    .where("environment_id", "=", environmentId)
    .where("subscriber_ref", "=", subscriberRef)
    .returningAll()
    .execute();
  return rows.map(messageFromRow);
}
