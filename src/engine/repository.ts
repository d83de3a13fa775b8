import DataLoader from "dataloader";
import type { Kysely, Selectable } from "kysely";
import { listSlots, runPrepared, runPreparedList, runPreparedRows, slot } from "../store/prepared.ts";
import type { Database, JobsTable, NotificationsTable } from "../store/schema.ts";
import { readBool, readJson, readTimestamp, writeJson } from "../store/values.ts";
import type { StepType } from "../workflows/domain.ts";
import {
  type ExecutionDetail,
  type Job,
  type JobStatus,
  type Notification,
  notificationFromRow,
  notificationsOfTransactions,
  type TriggerStatus,
} from "./domain.ts";

type Db = Kysely<Database>;

// ---------------------------------------------------------------- triggers

export interface TriggerRecord {
  id: string;
  organizationId: string;
  environmentId: string;
  transactionId: string;
  workflowId: string;
  status: TriggerStatus;
  request: Record<string, unknown>;
  fanoutCursor: string;
  fanoutDone: boolean;
  createdAt: string;
}

function toTrigger(row: Selectable<Database["triggers"]>): TriggerRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    transactionId: row.transaction_id,
    workflowId: row.workflow_id,
    status: row.status as TriggerStatus,
    request: readJson(row.request),
    fanoutCursor: row.fanout_cursor,
    fanoutDone: readBool(row.fanout_done),
    createdAt: readTimestamp(row.created_at),
  };
}

/**
 * Records the acknowledged trigger; undefined when the environment has one with this transactionId
 * already (the unique index decides, concurrent repeats included: PostgreSQL makes the second wait
 * for the first to commit, then do nothing).
 */
export async function insertTrigger(
  db: Db,
  trigger: Omit<TriggerRecord, "fanoutCursor" | "fanoutDone">,
): Promise<TriggerRecord | undefined> {
  const inserted = await insertTriggers(db, [trigger]);
  return inserted.has(trigger.id) ? { ...trigger, fanoutCursor: "", fanoutDone: false } : undefined;
}

/**
 * Inserts triggers in one statement; the ids of those inserted (one whose transactionId the
 * environment has seen is left out).
 */
export async function insertTriggers(
  db: Db,
  triggers: readonly Omit<TriggerRecord, "fanoutCursor" | "fanoutDone">[],
): Promise<Set<string>> {
  // Only the ids come back: the rest is what was written (reading the request back meant parsing
  // the whole run plan again on every trigger).
  const rows = await runPreparedRows(
    db,
    "insert trigger",
    triggers.map((trigger) => ({
      id: trigger.id,
      organization_id: trigger.organizationId,
      environment_id: trigger.environmentId,
      transaction_id: trigger.transactionId,
      workflow_id: trigger.workflowId,
      status: trigger.status,
      request: writeJson(trigger.request),
      fanout_cursor: "",
      fanout_done: false,
      created_at: trigger.createdAt,
    })),
    (placeholders) =>
      db
        .insertInto("triggers")
        .values(placeholders)
        .onConflict((conflict) => conflict.doNothing())
        .returning("id"),
  );
  return new Set(rows.map((row) => row.id));
}

export async function findTriggerByTransaction(db: Db, environmentId: string, transactionId: string) {
  const row = await db
    .selectFrom("triggers")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("transaction_id", "=", transactionId)
    .executeTakeFirst();
  return row ? toTrigger(row) : undefined;
}

export async function findTrigger(db: Db, id: string) {
  const row = await db.selectFrom("triggers").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? toTrigger(row) : undefined;
}

/** Records how far a fan-out has gone, in the transaction that wrote that batch. */
export async function advanceFanout(db: Db, id: string, cursor: string, done: boolean) {
  await db
    .updateTable("triggers")
    .set({ fanout_cursor: cursor, fanout_done: done })
    .where("id", "=", id)
    .execute();
}

// ---------------------------------------------------------------- notifications

type NotificationRow = Selectable<NotificationsTable>;

/**
 * Inserts the notifications that do not exist yet (one per trigger and subscriber) and returns
 * those it inserted: a fan-out batch run twice creates nothing the second time.
 */
export async function insertNotifications(db: Db, notifications: Notification[]): Promise<Notification[]> {
  if (notifications.length === 0) return [];
  // The notifications of one batch share their plan's objects (workflow, payload, ...): each is
  // serialized once, not once per subscriber.
  const serialized = new Map<unknown, string>();
  const json = (value: unknown) => {
    let text = serialized.get(value);
    if (text === undefined) {
      text = writeJson(value);
      serialized.set(value, text);
    }
    return text;
  };
  const rows = await runPreparedRows(
    db,
    "insert notifications",
    notifications.map((n) => ({
      id: n.id,
      organization_id: n.organizationId,
      environment_id: n.environmentId,
      trigger_id: n.triggerId,
      transaction_id: n.transactionId,
      workflow_id: n.workflowId,
      workflow: json(n.workflow),
      subscriber_ref: n.subscriberRef,
      payload: json(n.payload),
      overrides: json(n.overrides),
      actor: json(n.actor),
      tenant: json(n.tenant),
      to: json(n.to),
      channels: json(n.channels),
      topic_id: n.topicId,
      created_at: n.createdAt,
      updated_at: n.updatedAt,
    })),
    (placeholders) =>
      db
        .insertInto("notifications")
        .values(placeholders)
        .onConflict((conflict) => conflict.columns(["trigger_id", "subscriber_ref"]).doNothing())
        .returning("id"),
  );
  // Only the ids come back, of those inserted: the rest is what was written.
  const inserted = new Set(rows.map((row) => row.id));
  return notifications.filter((n) => inserted.has(n.id));
}

// ---------------------------------------------------------------- jobs

type JobRow = Selectable<JobsTable>;

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    notificationId: row.notification_id,
    transactionId: row.transaction_id,
    workflowId: row.workflow_id,
    subscriberRef: row.subscriber_ref,
    stepIndex: Number(row.step_index),
    step: readJson(row.step),
    type: row.type as StepType,
    status: row.status as JobStatus,
    runAt: row.run_at === null ? null : readTimestamp(row.run_at),
    attempts: Number(row.attempts),
    digest: readJson(row.digest),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

export async function insertJobs(db: Db, jobs: Job[]): Promise<void> {
  if (jobs.length === 0) return;
  // Several statements for a large batch: SQLite allows at most 32,766 parameters in one.
  for (let start = 0; start < jobs.length; start += 1000) {
    await runPreparedRows(
      db,
      "insert jobs",
      jobs.slice(start, start + 1000).map((job) => ({
        id: job.id,
        organization_id: job.organizationId,
        environment_id: job.environmentId,
        notification_id: job.notificationId,
        transaction_id: job.transactionId,
        workflow_id: job.workflowId,
        subscriber_ref: job.subscriberRef,
        step_index: job.stepIndex,
        step: writeJson(job.step),
        type: job.type,
        status: job.status,
        run_at: job.runAt,
        attempts: job.attempts,
        digest: writeJson(job.digest),
        created_at: job.createdAt,
        updated_at: job.updatedAt,
      })),
      (placeholders) => db.insertInto("jobs").values(placeholders),
    );
  }
}

// A notification's columns as read beside its job's, each under `n_<column>`.
const NOTIFICATION_COLUMNS = [
  "id",
  "organization_id",
  "environment_id",
  "trigger_id",
  "transaction_id",
  "workflow_id",
  "workflow",
  "subscriber_ref",
  "payload",
  "overrides",
  "actor",
  "tenant",
  "to",
  "channels",
  "created_at",
  "updated_at",
  "topic_id",
] as const satisfies readonly (keyof NotificationsTable)[];

type PrefixedNotification = { [K in (typeof NOTIFICATION_COLUMNS)[number] as `n_${K}`]: NotificationRow[K] };

type JobWithNotification = { job: Job; notification: Notification };

/**
 * Jobs with their notifications, in one statement: what a job's task reads before it runs the step.
 * A notification is never changed once written, so reading it here is no earlier than needed. Ids
 * not found are left out of the map.
 */
export async function findJobsWithNotifications(
  db: Db,
  ids: readonly string[],
): Promise<Map<string, JobWithNotification>> {
  const rows = await runPreparedList<JobRow & PrefixedNotification>(
    db,
    "find jobs with notifications",
    ids,
    (list) =>
      db
        .selectFrom("jobs")
        .innerJoin("notifications", "notifications.id", "jobs.notification_id")
        .selectAll("jobs")
        .select(NOTIFICATION_COLUMNS.map((column) => `notifications.${column} as n_${column}` as const))
        .where("jobs.id", "in", list),
  );
  const found = new Map<string, JobWithNotification>();
  for (const row of rows) {
    const notification = Object.fromEntries(
      NOTIFICATION_COLUMNS.map((column) => [column, row[`n_${column}`]]),
    ) as unknown as NotificationRow;
    found.set(row.id, { job: toJob(row), notification: notificationFromRow(notification) });
  }
  return found;
}

/** The most jobs one read asks for: a process runs up to 32 tasks at once (WORKER_CONCURRENCY's default). */
const JOB_READS_MAX = 32;

const jobReads = new WeakMap<Db, DataLoader<string, JobWithNotification | undefined>>();

/**
 * A job with its notification, as its task reads it first. The tasks a process starts together each
 * read their own job: the reads asked in one turn of the event loop go out as one statement (the
 * queue hands out its jobs many at a time, and on PostgreSQL a statement a job was most of a due
 * delay's statements). Each read is sent when it is asked, with those asked beside it, and nothing is
 * kept once answered: an answer is as fresh as a statement of its own.
 */
export function findJobWithNotification(db: Db, id: string): Promise<JobWithNotification | undefined> {
  let loader = jobReads.get(db);
  if (!loader) {
    loader = new DataLoader(
      async (ids: readonly string[]) => {
        const found = await findJobsWithNotifications(db, ids);
        return ids.map((jobId) => found.get(jobId));
      },
      // Gathered until the end of the turn (the queue starts its tasks from several callbacks of one turn).
      { cache: false, maxBatchSize: JOB_READS_MAX, batchScheduleFn: (send) => setImmediate(send) },
    );
    jobReads.set(db, loader);
  }
  return loader.load(id);
}

type JobMove = { runAt?: string | null; countAttempt?: boolean; digest?: Record<string, unknown> };

/** The conditional update of moveJob and settleJob; `whole`: it returns the whole row, else its attempts. */
async function runJobMove<Row>(
  db: Db,
  id: string,
  from: readonly JobStatus[],
  to: JobStatus,
  now: string,
  changes: JobMove,
  whole: boolean,
): Promise<Row | undefined> {
  const setsRunAt = changes.runAt !== undefined;
  const setsDigest = changes.digest !== undefined;
  const countsAttempt = changes.countAttempt === true;
  const fromList = listSlots("from", from);
  const [row] = await runPrepared<Row>(
    db,
    `move job ${from.length} ${setsRunAt} ${setsDigest} ${countsAttempt} ${whole}`,
    () => {
      const query = db
        .updateTable("jobs")
        .set((eb) => ({
          status: slot("to"),
          updated_at: slot("now"),
          ...(setsRunAt ? { run_at: slot("runAt") } : {}),
          ...(setsDigest ? { digest: slot("digest") } : {}),
          ...(countsAttempt ? { attempts: eb("attempts", "+", 1) } : {}),
        }))
        .where("id", "=", slot("id"))
        .where("status", "in", fromList.placeholders);
      return whole ? query.returningAll() : query.returning("attempts");
    },
    {
      id,
      to,
      now,
      runAt: changes.runAt,
      digest: setsDigest ? writeJson(changes.digest) : undefined,
      ...fromList.values,
    },
  );
  return row;
}

/**
 * Moves the job to `to` when it is in one of `from`, in one statement, and returns it as changed;
 * undefined when it was not in one of them. This is how a worker claims a job and how a cancel
 * stops one: whichever statement comes first wins, and the other matches nothing.
 */
export async function moveJob(
  db: Db,
  id: string,
  from: readonly JobStatus[],
  to: JobStatus,
  now: string,
  changes: JobMove = {},
): Promise<Job | undefined> {
  const row = await runJobMove<JobRow>(db, id, from, to, now, changes, true);
  return row ? toJob(row) : undefined;
}

/**
 * moveJob for a caller that already holds the job: the same update, answering only whether it
 * moved (and its attempts), without reading the job's step and digest back.
 */
export async function settleJob(
  db: Db,
  id: string,
  from: readonly JobStatus[],
  to: JobStatus,
  now: string,
  changes: JobMove = {},
): Promise<{ attempts: number } | undefined> {
  const row = await runJobMove<{ attempts: number | string }>(db, id, from, to, now, changes, false);
  return row ? { attempts: Number(row.attempts) } : undefined;
}

/**
 * Queues the notification's job at `stepIndex` if it is `pending`, in one statement; the job as
 * queued (the run goes on from it without reading it again), or undefined when the run has no such
 * step or that job is not pending (canceled, merged, ...).
 */
export async function queueJobAt(
  db: Db,
  notificationId: string,
  stepIndex: number,
  now: string,
): Promise<Job | undefined> {
  const [row] = await runPrepared<JobRow>(
    db,
    "queue job at",
    () =>
      db
        .updateTable("jobs")
        .set({ status: "queued", updated_at: slot("now") })
        .where("notification_id", "=", slot("notificationId"))
        .where("step_index", "=", slot("stepIndex"))
        .where("status", "=", "pending")
        .returningAll(),
    { notificationId, stepIndex, now },
  );
  return row ? toJob(row) : undefined;
}

/** Moves every job of the notification after `stepIndex` that has not run to `canceled`; returns them. */
export async function cancelJobsAfter(db: Db, notificationId: string, stepIndex: number, now: string) {
  const rows = await db
    .updateTable("jobs")
    .set({ status: "canceled", updated_at: now })
    .where("notification_id", "=", notificationId)
    .where("step_index", ">", stepIndex)
    .where("status", "in", ["pending", "queued", "delayed"])
    .returningAll()
    .execute();
  return rows.map(toJob);
}

/**
 * Cancels every job of the transaction that has not run yet, but those of the notifications in
 * `keep`; returns those it canceled.
 */
export async function cancelTransactionJobs(
  db: Db,
  environmentId: string,
  transactionId: string,
  now: string,
  keep: readonly string[] = [],
) {
  let query = db
    .updateTable("jobs")
    .set({ status: "canceled", updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("notification_id", "in", notificationsOfTransactions(db, environmentId, [transactionId]))
    .where("transaction_id", "=", transactionId)
    .where("status", "in", ["pending", "queued", "delayed"]);
  if (keep.length > 0) query = query.where("notification_id", "not in", [...keep]);
  const rows = await query.returningAll().execute();
  return rows.map(toJob);
}

/** Cancels every job of the subscriber that has not run yet (the subscriber is being deleted). */
export async function cancelSubscriberJobs(
  db: Db,
  environmentId: string,
  subscriberRef: string,
  now: string,
) {
  const result = await db
    .updateTable("jobs")
    .set({ status: "canceled", updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("subscriber_ref", "=", subscriberRef)
    .where("status", "in", ["pending", "queued", "delayed"])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function jobsOfNotifications(db: Db, notificationIds: readonly string[]) {
  if (notificationIds.length === 0) return [];
  const rows = await runPreparedList<JobRow>(db, "jobs of notifications", notificationIds, (list) =>
    db
      .selectFrom("jobs")
      .selectAll()
      .where("notification_id", "in", list)
      .orderBy("notification_id")
      .orderBy("step_index"),
  );
  return rows.map(toJob);
}

// ---------------------------------------------------------------- execution details

export async function insertDetails(db: Db, details: ExecutionDetail[]): Promise<void> {
  if (details.length === 0) return;
  for (let start = 0; start < details.length; start += 1000) {
    await runPreparedRows(
      db,
      "insert details",
      details.slice(start, start + 1000).map((d) => ({
        id: d.id,
        organization_id: d.organizationId,
        environment_id: d.environmentId,
        job_id: d.jobId,
        notification_id: d.notificationId,
        subscriber_ref: d.subscriberRef,
        status: d.status,
        detail: d.detail,
        raw: d.raw,
        is_retry: d.isRetry,
        created_at: d.createdAt,
      })),
      (placeholders) => db.insertInto("execution_details").values(placeholders),
    );
  }
}

/**
 * settleJob for many jobs at once, in one statement: those of `ids` in one of `from` move to `to`;
 * the ids of those that moved.
 */
export async function settleJobs(
  db: Db,
  ids: readonly string[],
  from: readonly JobStatus[],
  to: JobStatus,
  now: string,
  changes: { countAttempt?: boolean } = {},
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const fromList = listSlots("from", from);
  const rows = await runPreparedList<{ id: string }>(
    db,
    `settle jobs from ${from.length}${changes.countAttempt ? " counting" : ""}`,
    ids,
    (list) =>
      db
        .updateTable("jobs")
        .set((eb) => ({
          status: slot("to"),
          updated_at: slot("now"),
          ...(changes.countAttempt ? { attempts: eb("attempts", "+", 1) } : {}),
        }))
        .where("id", "in", list)
        .where("status", "in", fromList.placeholders)
        .returning("id"),
    { ...fromList.values, to, now },
  );
  return new Set(rows.map((row) => row.id));
}

/** queueJobAt for many notifications' jobs at one step index, in one statement: the jobs as queued. */
export async function queueJobsAt(
  db: Db,
  notificationIds: readonly string[],
  stepIndex: number,
  now: string,
): Promise<Job[]> {
  if (notificationIds.length === 0) return [];
  const rows = await runPreparedList<JobRow>(
    db,
    "queue jobs at",
    notificationIds,
    (list) =>
      db
        .updateTable("jobs")
        .set({ status: "queued", updated_at: slot("now") })
        .where("notification_id", "in", list)
        .where("step_index", "=", slot("stepIndex"))
        .where("status", "=", "pending")
        .returningAll(),
    { now, stepIndex },
  );
  return rows.map(toJob);
}
