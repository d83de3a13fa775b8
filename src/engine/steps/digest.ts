import { createHash } from "node:crypto";
import { newObjectId } from "../../ids.ts";
import { dialectOf } from "../../store/values.ts";
import type { StepMetadata } from "../../workflows/domain.ts";
import * as windows from "../digest-repository.ts";
import { type DigestSettings, digestDecision } from "../digest-window.ts";
import type { Job, Notification } from "../domain.ts";
import { type EngineDeps, runJobTask, TASKS } from "../engine-deps.ts";
import type { NewTask } from "../queue/port.ts";
import { newDetail } from "../records.ts";
import * as engine from "../repository.ts";
import type { StepHandler, StepOutcome } from "./handler.ts";

/**
 * Digest steps (docs/engine.md, "Delays and digests"). The events of one workflow, digest step, subscriber
 * and value at `digestKey` collect in a window: a row of `digest_windows`, `open` from the first event until
 * its timer (a queue task at `closes_at`) closes it. Then the steps after the digest run once, for one of its
 * events (the carrier: the first that was not canceled), with every event's payload.
 *
 * - An arriving event, the close and a cancel of the same key each run in one transaction that holds
 *   the key's lock (digest-repository.ts `lockWindowKeys`), so they happen one after the other: an
 *   event that arrives while its window closes is either in that window (it joined first) or opens
 *   the next one (the close came first), never both and never neither. The close is one conditional
 *   update (`open` → `closed`), and an event joins only a window that is `open`; at most one window
 *   per key is open (a partial unique index).
 * - The event that opens a window is its lead: its digest job waits `delayed` until the close. The
 *   others are `merged`, and so are the steps after them (Novu's statuses).
 * - A cancel of a trigger removes its waiting events from their open windows (their jobs become
 *   `canceled`); a canceled lead hands the delivery to the next event when the window closes. Once a
 *   window has closed, its events are delivered and a cancel no longer takes them out.
 * - Windows and their timers are rows: a restart loses none and closes none twice (the close is
 *   conditional, and everything it does commits with it).
 */

/** The digest's data for one closed window, kept on the carrier's digest job. */
export interface DigestRecord {
  windowId: string;
  digestKey: string;
  digestValue: string;
  total_count?: number;
}

/** The metadata a digest runs on: `type: "backoff"` (Novu's older form) is `backoff: true`. */
export function digestSettingsOf(metadata: StepMetadata): DigestSettings {
  return {
    amount: metadata.amount,
    unit: metadata.unit,
    backoff: metadata.backoff || metadata.type === "backoff",
    backoffAmount: metadata.backoffAmount,
    backoffUnit: metadata.backoffUnit,
  };
}

/** The value at a dot path of the payload, as JSON ("" when there is no key or no value). */
export function digestValueOf(payload: Record<string, unknown>, digestKey: string): string {
  if (digestKey === "") return "";
  const value = digestKey
    .split(".")
    .reduce<unknown>(
      (at, key) => (at !== null && typeof at === "object" ? (at as Record<string, unknown>)[key] : undefined),
      payload,
    );
  return value === undefined ? "" : JSON.stringify(value);
}

/** The key of a window: environment, workflow, step, subscriber, digestKey and its value, hashed. */
export function windowKeyOf(input: {
  environmentId: string;
  workflowId: string;
  stepId: string;
  subscriberRef: string;
  digestKey: string;
  digestValue: string;
}): string {
  return createHash("sha256")
    .update(
      JSON.stringify([
        input.environmentId,
        input.workflowId,
        input.stepId,
        input.subscriberRef,
        input.digestKey,
        input.digestValue,
      ]),
    )
    .digest("hex");
}

/** The task that closes a window when it is due. */
export const closeDigestTask = (windowId: string, runAt?: number, key = `digest:${windowId}`): NewTask => ({
  task: TASKS.closeDigest,
  payload: { windowId },
  key,
  ...(runAt !== undefined ? { runAt } : {}),
});

/** The digest step of a stored workflow: the event joins its window in the recording transaction. */
export const digestStep: StepHandler = {
  gated: true,
  // Claimed first: joining a window checks, under the window's lock, that the job is still
  // `running`, which is how an event and a cancel of its trigger settle who came first.
  claims: true,
  run: ({ job, notification }) => ({
    inTransaction: (trxDeps) => arriveAtDigest(trxDeps, job, notification),
  }),
};

const readable = (value: string) => (value.length > 200 ? `${value.slice(0, 197)}...` : value);

/**
 * An event reaches a digest step: it joins the open window of its key, opens one, or (backoff, no
 * recent event) goes on at once. Runs inside the transaction that records the outcome (run-job.ts
 * `finish`), which is what makes joining and being a member one step.
 */
export async function arriveAtDigest(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  /** A step defined in code: the window and key its bridge answered, instead of the step's metadata. */
  given?: {
    settings: DigestSettings;
    digestKey: string;
    digestValue: string;
    /** A window timed by a cron: when a window opened at `now` closes (epoch ms), instead of the settings'. */
    closesAfter?: (now: number) => number;
  },
): Promise<StepOutcome> {
  const { db } = deps;
  const now = deps.clock.now();
  const nowIso = new Date(now).toISOString();
  const metadata = job.step.metadata;
  const digestKey = given?.digestKey ?? metadata.digestKey ?? "";
  const digestValue = given?.digestValue ?? digestValueOf(notification.payload, digestKey);
  const windowKey = windowKeyOf({
    environmentId: job.environmentId,
    workflowId: job.workflowId,
    stepId: job.step._id,
    subscriberRef: job.subscriberRef,
    digestKey,
    digestValue,
  });
  await windows.lockWindowKeys(db, [windowKey]);

  // Under the lock, the job's state is settled: a close or a cancel that came first shows here.
  const state = await windows.jobState(db, job.id);
  if (state?.status !== "running") {
    return { status: "canceled", executionStatus: "Warning", detail: "The job was settled meanwhile" };
  }
  if (state.runCanceled) {
    return {
      status: "canceled",
      executionStatus: "Warning",
      detail: "The trigger was canceled while its event reached the digest",
    };
  }
  const record = (windowId: string): DigestRecord => ({
    windowId,
    digestKey,
    digestValue: readable(digestValue),
  });
  const waiting = (window: windows.DigestWindow): StepOutcome => {
    const closesAt = Date.parse(window.closesAt);
    return {
      status: "delayed",
      executionStatus: "Pending",
      detail: `Digest window open until ${window.closesAt}`,
      dueAt: closesAt,
      dueTask: closeDigestTask(window.id, closesAt),
      digest: { ...record(window.id) },
    };
  };
  const merged = (window: windows.DigestWindow, seq: number): StepOutcome => ({
    status: "merged",
    executionStatus: "Success",
    detail: `Merged into the digest window opened by job ${window.leadJobId} (event ${seq}); it closes at ${window.closesAt}`,
    digest: { ...record(window.id) },
  });

  // Run again (a crash cut the first run short, or its task ran twice): the event may have joined.
  if (job.attempts > 1) {
    const known = await windows.membershipOf(db, job.id);
    if (known) {
      if (known.window.status !== "open") {
        return { status: "canceled", executionStatus: "Warning", detail: "The window closed meanwhile" };
      }
      return known.window.leadJobId === job.id ? waiting(known.window) : merged(known.window, known.seq);
    }
  }

  const open = await windows.joinOpenWindow(db, windowKey, nowIso);
  if (open) {
    await windows.insertEvent(db, {
      windowId: open.id,
      seq: open.eventCount,
      jobId: job.id,
      notificationId: job.notificationId,
      createdAt: nowIso,
    });
    return merged(open, open.eventCount);
  }

  const settings = given?.settings ?? digestSettingsOf(metadata);
  const previousEventAt = settings.backoff ? await windows.lastEventAt(db, windowKey) : undefined;
  const decision =
    given?.closesAfter !== undefined
      ? ({ mode: "digest", windowEndsAt: given.closesAfter(now) } as const)
      : digestDecision({ metadata: settings, previousEventAt, now });
  const immediate = decision.mode === "immediate";
  const closesAt = immediate ? now : decision.windowEndsAt;
  const window: windows.DigestWindow = {
    id: newObjectId(),
    organizationId: job.organizationId,
    environmentId: job.environmentId,
    windowKey,
    workflowId: job.workflowId,
    stepId: job.step._id,
    subscriberRef: job.subscriberRef,
    digestKey,
    digestValue: readable(digestValue),
    // A lone event under backoff is a window of one, closed at once: the next event's backoff sees it.
    status: immediate ? "closed" : "open",
    openedAt: nowIso,
    closesAt: new Date(closesAt).toISOString(),
    lastEventAt: nowIso,
    eventCount: 1,
    leadJobId: job.id,
    carrierJobId: immediate ? job.id : null,
    totalCount: immediate ? 1 : null,
    createdAt: nowIso,
    updatedAt: nowIso,
  };
  await windows.insertWindow(db, window);
  await windows.insertEvent(db, {
    windowId: window.id,
    seq: 1,
    jobId: job.id,
    notificationId: job.notificationId,
    createdAt: nowIso,
  });
  if (immediate) {
    return {
      status: "completed",
      executionStatus: "Success",
      detail: "No recent event for this digest key (backoff): the event goes on at once",
      digest: { ...record(window.id), total_count: 1 },
    };
  }
  return waiting(window);
}

/**
 * The close task: closes the window (if it is open and due), picks the carrier (the first event
 * whose trigger was not canceled), and starts the steps after its digest. One transaction, under
 * the key's lock; a second run finds the window closed and does nothing.
 */
export async function closeDigestWindow(deps: EngineDeps, windowId: string): Promise<void> {
  const now = deps.clock.now();
  const nowIso = new Date(now).toISOString();
  const early = await deps.db.transaction().execute(async (trx) => {
    const seen = await windows.findWindow(trx, windowId);
    if (seen?.status !== "open") return undefined;
    await windows.lockWindowKeys(trx, [seen.windowKey]);
    const window = await windows.findWindow(trx, windowId);
    if (window?.status !== "open") return undefined;
    const closesAt = Date.parse(window.closesAt);
    // Run before its time (another host's clock, or a queue on real time under a test's clock).
    if (closesAt > now) return closesAt;
    if (!(await windows.closeWindow(trx, windowId, nowIso))) return undefined;

    const members = await windows.membersOf(trx, windowId);
    const live = members.filter(
      (m) => (m.status === "delayed" || m.status === "merged" || m.status === "running") && !m.runCanceled,
    );
    const gone = members.filter((m) => !live.includes(m));
    for (const member of gone) {
      await engine.moveJob(
        trx,
        member.jobId,
        ["pending", "queued", "delayed", "merged", "running"],
        "canceled",
        nowIso,
      );
    }
    await windows.deleteEvents(
      trx,
      windowId,
      gone.map((m) => m.jobId),
    );
    const carrier = live[0];
    await windows.recordWindowResult(trx, windowId, carrier?.jobId ?? null, live.length, nowIso);
    if (!carrier) return undefined;

    const digest: DigestRecord = {
      windowId,
      digestKey: window.digestKey,
      digestValue: window.digestValue,
      total_count: live.length,
    };
    const job = await engine.moveJob(
      trx,
      carrier.jobId,
      ["delayed", "merged", "running"],
      "completed",
      nowIso,
      { digest: { ...digest } },
    );
    if (!job) return undefined;
    const others = live.length - 1;
    await engine.insertDetails(trx, [
      newDetail(
        job,
        "Success",
        `The digest window closed with ${live.length} event${live.length === 1 ? "" : "s"}` +
          (others > 0 ? `; the steps after it run once, for all of them` : ""),
        nowIso,
      ),
    ]);
    // A merged event that carries the digest (its lead was canceled): its steps wait again.
    await windows.moveJobsAfter(trx, job.notificationId, job.stepIndex, ["merged"], "pending", nowIso);
    const queued = await engine.queueJobAt(trx, job.notificationId, job.stepIndex + 1, nowIso);
    if (queued) await deps.queue.add(trx, [runJobTask(queued.id)]);
    return undefined;
  });
  if (early !== undefined) {
    // Its own key: the task running now still holds `digest:<id>`.
    await deps.db
      .transaction()
      .execute((trx) => deps.queue.add(trx, [closeDigestTask(windowId, early, `digest:${windowId}:${now}`)]));
  }
  deps.queue.wake();
}

/**
 * The digested events' payloads (oldest first) for a job after a digest step: those of the window
 * its run's digest carried; undefined when no digest ran before it.
 */
export async function digestedEvents(
  deps: EngineDeps,
  job: Job,
  notification: Pick<Notification, "channels">,
): Promise<Record<string, unknown>[] | undefined> {
  // The run's step types, in order: no digest before this step, nothing to look up.
  if (!notification.channels.slice(0, job.stepIndex).includes("digest")) return undefined;
  const jobs = await engine.jobsOfNotifications(deps.db, [job.notificationId]);
  const digestJob = jobs
    .filter((j) => j.type === "digest" && j.stepIndex < job.stepIndex && j.status === "completed")
    .at(-1);
  const windowId = digestJob?.digest.windowId;
  if (typeof windowId !== "string") return undefined;
  return windows.eventPayloads(deps.db, windowId);
}

/**
 * A cancel's part in digests, inside its transaction: takes the locks of the windows the
 * transaction's digest jobs may be in (so no event joins, and no window closes, half-way through
 * the cancel), then cancels its events that wait in open windows; returns how many jobs it canceled.
 * The caller cancels the transaction's waiting jobs after this (a lead's `delayed` digest job among
 * them).
 */
export async function lockTransactionWindows(
  deps: Pick<EngineDeps, "db">,
  environmentId: string,
  transactionId: string,
): Promise<void> {
  // SQLite: one transaction writes at a time, which is lock enough.
  if (dialectOf(deps.db) === "sqlite") return;
  const jobs = await windows.liveDigestJobsOfTransaction(deps.db, environmentId, transactionId);
  // A step defined in code keys its window by what its bridge answered: the window it joined says.
  const joined = await Promise.all(
    jobs.filter((job) => job.step.code !== undefined).map((job) => windows.membershipOf(deps.db, job.id)),
  );
  const keys = jobs
    .filter((job) => job.step.code === undefined)
    .map((job) => {
      const digestKey = job.step.metadata.digestKey ?? "";
      return windowKeyOf({
        environmentId: job.environmentId,
        workflowId: job.workflowId,
        stepId: job.step._id,
        subscriberRef: job.subscriberRef,
        digestKey,
        digestValue: digestValueOf(job.payload, digestKey),
      });
    });
  await windows.lockWindowKeys(deps.db, [
    ...keys,
    ...joined.flatMap((member) => (member ? [member.window.windowKey] : [])),
  ]);
}

/**
 * The transaction's notifications a cancel leaves alone: those carrying a closed digest of other
 * events besides their own (the steps after the digest deliver them all).
 */
export function deliveringOthers(
  deps: Pick<EngineDeps, "db">,
  environmentId: string,
  transactionId: string,
): Promise<string[]> {
  return windows.carryingOthers(deps.db, environmentId, transactionId);
}

/** Cancels the transaction's events that wait in open windows (see lockTransactionWindows). */
export function cancelWaitingEvents(
  deps: Pick<EngineDeps, "db">,
  environmentId: string,
  transactionId: string,
  now: string,
): Promise<number> {
  return windows.cancelOpenMembers(deps.db, environmentId, transactionId, now);
}

/** After an event merged into a window: the steps after it are merged too. */
export function mergeFollowingSteps(deps: Pick<EngineDeps, "db">, job: Job, now: string): Promise<number> {
  return windows.moveJobsAfter(deps.db, job.notificationId, job.stepIndex, ["pending"], "merged", now);
}
