import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, DigestWindowsTable } from "../store/schema.ts";
import { dialectOf, readJson, readTimestamp } from "../store/values.ts";
import { type JobStatus, notificationsOfTransactions, triggersOfTransactions } from "./domain.ts";

/**
 * The SQL of digest windows (src/engine/steps/digest.ts says what they mean). Every function takes the
 * transaction it runs in; the callers hold the window key's lock (`lockWindowKeys`) first.
 */

type Db = Kysely<Database>;

export interface DigestWindow {
  id: string;
  organizationId: string;
  environmentId: string;
  windowKey: string;
  workflowId: string;
  stepId: string;
  subscriberRef: string;
  digestKey: string;
  digestValue: string;
  status: "open" | "closed";
  openedAt: string;
  closesAt: string;
  lastEventAt: string;
  eventCount: number;
  leadJobId: string;
  carrierJobId: string | null;
  totalCount: number | null;
  createdAt: string;
  updatedAt: string;
}

function toWindow(row: Selectable<DigestWindowsTable>): DigestWindow {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    windowKey: row.window_key,
    workflowId: row.workflow_id,
    stepId: row.step_id,
    subscriberRef: row.subscriber_ref,
    digestKey: row.digest_key,
    digestValue: row.digest_value,
    status: row.status as DigestWindow["status"],
    openedAt: readTimestamp(row.opened_at),
    closesAt: readTimestamp(row.closes_at),
    lastEventAt: readTimestamp(row.last_event_at),
    eventCount: Number(row.event_count),
    leadJobId: row.lead_job_id,
    carrierJobId: row.carrier_job_id,
    totalCount: row.total_count === null ? null : Number(row.total_count),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

// The first half of PostgreSQL's two-key advisory locks: a space of our own for window keys.
const WINDOW_LOCK_SPACE = 0x74_69_64_67; // "tidg"
// Window keys share this many locks: a cancel of a broadcast's trigger takes at most this many (the
// server's lock table holds a few thousand in all), and two keys wait for each other only rarely.
const WINDOW_LOCKS = 1024;

/**
 * Holds the window keys' locks until the transaction ends, so that an event's arrival, a window's
 * close and a cancel of the same key happen one after the other. PostgreSQL: transaction-level
 * advisory locks (one of WINDOW_LOCKS per key, by its hash), taken in a fixed order so no two takers
 * wait for each other. SQLite: nothing to do, one transaction writes at a time.
 */
export async function lockWindowKeys(db: Db, keys: readonly string[]): Promise<void> {
  if (keys.length === 0 || dialectOf(db) === "sqlite") return;
  // Window keys are SHA-256 hex: their first 32 bits are as good a hash as any.
  const locks = [...new Set(keys.map((key) => Number.parseInt(key.slice(0, 8), 16) % WINDOW_LOCKS))];
  for (const lock of locks.sort((a, b) => a - b)) {
    await sql`select pg_advisory_xact_lock(${WINDOW_LOCK_SPACE}::int, ${lock}::int)`.execute(db);
  }
}

export async function findWindow(db: Db, id: string) {
  const row = await db.selectFrom("digest_windows").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? toWindow(row) : undefined;
}

/** When the key last saw an event (epoch ms), in any window; undefined when never. */
export async function lastEventAt(db: Db, windowKey: string): Promise<number | undefined> {
  const row = await db
    .selectFrom("digest_windows")
    .select("last_event_at")
    .where("window_key", "=", windowKey)
    .orderBy("last_event_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? Date.parse(readTimestamp(row.last_event_at)) : undefined;
}

export async function insertWindow(db: Db, window: DigestWindow): Promise<void> {
  await db
    .insertInto("digest_windows")
    .values({
      id: window.id,
      organization_id: window.organizationId,
      environment_id: window.environmentId,
      window_key: window.windowKey,
      workflow_id: window.workflowId,
      step_id: window.stepId,
      subscriber_ref: window.subscriberRef,
      digest_key: window.digestKey,
      digest_value: window.digestValue,
      status: window.status,
      opened_at: window.openedAt,
      closes_at: window.closesAt,
      last_event_at: window.lastEventAt,
      event_count: window.eventCount,
      lead_job_id: window.leadJobId,
      carrier_job_id: window.carrierJobId,
      total_count: window.totalCount,
      created_at: window.createdAt,
      updated_at: window.updatedAt,
    })
    .execute();
}

/**
 * One more event joins the open window of the key, if there is one (one conditional update): the
 * window, with the event's seq as its `eventCount`; undefined when none is open.
 */
export async function joinOpenWindow(db: Db, windowKey: string, now: string) {
  const row = await db
    .updateTable("digest_windows")
    .set((eb) => ({ event_count: eb("event_count", "+", 1), last_event_at: now, updated_at: now }))
    .where("window_key", "=", windowKey)
    .where("status", "=", "open")
    .returningAll()
    .executeTakeFirst();
  return row ? toWindow(row) : undefined;
}

/** Closes the window if it is open (one conditional update); false when it was not. */
export async function closeWindow(db: Db, id: string, now: string): Promise<boolean> {
  const row = await db
    .updateTable("digest_windows")
    .set({ status: "closed", updated_at: now })
    .where("id", "=", id)
    .where("status", "=", "open")
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

export async function recordWindowResult(
  db: Db,
  id: string,
  carrierJobId: string | null,
  totalCount: number,
  now: string,
): Promise<void> {
  await db
    .updateTable("digest_windows")
    .set({ carrier_job_id: carrierJobId, total_count: totalCount, updated_at: now })
    .where("id", "=", id)
    .execute();
}

export async function insertEvent(
  db: Db,
  event: { windowId: string; seq: number; jobId: string; notificationId: string; createdAt: string },
): Promise<void> {
  await db
    .insertInto("digest_events")
    .values({
      window_id: event.windowId,
      seq: event.seq,
      job_id: event.jobId,
      notification_id: event.notificationId,
      created_at: event.createdAt,
    })
    .execute();
}

/** The window a digest job's event joined, if any. */
export async function membershipOf(db: Db, jobId: string) {
  const row = await db
    .selectFrom("digest_events")
    .innerJoin("digest_windows", "digest_windows.id", "digest_events.window_id")
    .selectAll("digest_windows")
    .select("digest_events.seq")
    .where("digest_events.job_id", "=", jobId)
    .executeTakeFirst();
  return row ? { window: toWindow(row), seq: Number(row.seq) } : undefined;
}

export interface WindowMember {
  seq: number;
  jobId: string;
  notificationId: string;
  stepIndex: number;
  status: JobStatus;
  /** Some job of the member's run was canceled (its trigger was). */
  runCanceled: boolean;
}

/** The events of a window in the order they joined, with the state of their digest jobs. */
export async function membersOf(db: Db, windowId: string): Promise<WindowMember[]> {
  const rows = await db
    .selectFrom("digest_events as e")
    .innerJoin("jobs as j", "j.id", "e.job_id")
    .select(["e.seq", "e.job_id", "e.notification_id", "j.step_index", "j.status"])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom("jobs as other")
            .select("other.id")
            .whereRef("other.notification_id", "=", "e.notification_id")
            .where("other.status", "=", "canceled"),
        )
        .as("run_canceled"),
    )
    .where("e.window_id", "=", windowId)
    .orderBy("e.seq")
    .execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    jobId: row.job_id,
    notificationId: row.notification_id,
    stepIndex: Number(row.step_index),
    status: row.status as JobStatus,
    runCanceled: row.run_canceled === true || Number(row.run_canceled) === 1,
  }));
}

export async function deleteEvents(db: Db, windowId: string, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  await db
    .deleteFrom("digest_events")
    .where("window_id", "=", windowId)
    .where("job_id", "in", [...jobIds])
    .execute();
}

/** The payloads of a window's events, oldest first. */
export async function eventPayloads(db: Db, windowId: string): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom("digest_events as e")
    .innerJoin("notifications as n", "n.id", "e.notification_id")
    .select("n.payload")
    .where("e.window_id", "=", windowId)
    .orderBy("e.seq")
    .execute();
  return rows.map((row) => readJson<Record<string, unknown>>(row.payload));
}

/** A job's status, and whether some job of its run was canceled (its trigger was). */
export async function jobState(db: Db, jobId: string) {
  const row = await db
    .selectFrom("jobs as j")
    .select("j.status")
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom("jobs as other")
            .select("other.id")
            .whereRef("other.notification_id", "=", "j.notification_id")
            .where("other.status", "=", "canceled"),
        )
        .as("run_canceled"),
    )
    .where("j.id", "=", jobId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    status: row.status as JobStatus,
    runCanceled: row.run_canceled === true || Number(row.run_canceled) === 1,
  };
}

/** Moves the notification's jobs after `stepIndex` that are in `from` to `to`; returns how many. */
export async function moveJobsAfter(
  db: Db,
  notificationId: string,
  stepIndex: number,
  from: readonly JobStatus[],
  to: JobStatus,
  now: string,
): Promise<number> {
  const result = await db
    .updateTable("jobs")
    .set({ status: to, updated_at: now })
    .where("notification_id", "=", notificationId)
    .where("step_index", ">", stepIndex)
    .where("status", "in", [...from])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The digest jobs of a transaction that may still be in or enter a window, with their run's payload. */
export async function liveDigestJobsOfTransaction(db: Db, environmentId: string, transactionId: string) {
  const rows = await db
    .selectFrom("jobs as j")
    .innerJoin("notifications as n", "n.id", "j.notification_id")
    .select(["j.id", "j.environment_id", "j.workflow_id", "j.subscriber_ref", "j.step", "n.payload"])
    .where("j.environment_id", "=", environmentId)
    .where("n.trigger_id", "in", triggersOfTransactions(db, environmentId, [transactionId]))
    .where("j.transaction_id", "=", transactionId)
    .where("j.type", "=", "digest")
    .where("j.status", "in", ["pending", "queued", "running", "delayed", "merged"])
    .execute();
  return rows.map((row) => ({
    id: row.id,
    environmentId: row.environment_id,
    workflowId: row.workflow_id,
    subscriberRef: row.subscriber_ref,
    step: readJson<{ _id: string; metadata: { digestKey?: string }; code?: unknown }>(row.step),
    payload: readJson<Record<string, unknown>>(row.payload),
  }));
}

/**
 * Cancels the transaction's `merged` jobs whose events wait in a window that is still open (the
 * merged digest job and the merged steps after it); returns how many.
 */
export async function cancelOpenMembers(
  db: Db,
  environmentId: string,
  transactionId: string,
  now: string,
): Promise<number> {
  const result = await db
    .updateTable("jobs")
    .set({ status: "canceled", updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("notification_id", "in", notificationsOfTransactions(db, environmentId, [transactionId]))
    .where("transaction_id", "=", transactionId)
    .where("status", "=", "merged")
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("digest_events as e")
          .innerJoin("digest_windows as w", "w.id", "e.window_id")
          .select("e.job_id")
          .whereRef("e.notification_id", "=", "jobs.notification_id")
          .where("w.status", "=", "open"),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The transaction's notifications whose run carries a closed digest of more than its own event: the
 * steps after that digest deliver the other events too, so a cancel leaves them alone.
 */
export async function carryingOthers(
  db: Db,
  environmentId: string,
  transactionId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom("jobs as c")
    .innerJoin("digest_windows as w", "w.carrier_job_id", "c.id")
    .select("c.notification_id")
    .where("c.environment_id", "=", environmentId)
    .where("c.notification_id", "in", notificationsOfTransactions(db, environmentId, [transactionId]))
    .where("c.transaction_id", "=", transactionId)
    .where("c.type", "=", "digest")
    .where("w.total_count", ">", 1)
    .execute();
  return rows.map((row) => row.notification_id);
}

/** The window's events as a code workflow's steps read them: each notification's id, time and payload, oldest first. */
export async function eventRecords(
  db: Db,
  windowId: string,
): Promise<{ id: string; time: string; payload: Record<string, unknown> }[]> {
  const rows = await db
    .selectFrom("digest_events as e")
    .innerJoin("notifications as n", "n.id", "e.notification_id")
    .select(["n.id", "n.payload", "e.created_at"])
    .where("e.window_id", "=", windowId)
    .orderBy("e.seq")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    time: readTimestamp(row.created_at),
    payload: readJson<Record<string, unknown>>(row.payload),
  }));
}
