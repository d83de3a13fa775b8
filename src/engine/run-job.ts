import { isoNow } from "../clock.ts";
import { pipelined } from "../store/pipeline.ts";
import type { Subscriber, SubscriberPreferences } from "../subscribers/domain.ts";
import { getSubscriberByRef, loadSubscriberPreferences } from "../subscribers/service.ts";
import type { ExecutionDetail, Job, JobStatus, Notification } from "./domain.ts";
import { joinsDueDelays, runDueDelay } from "./due-delays.ts";
import { type EngineDeps, engineOnConnection, runJobTask } from "./engine-deps.ts";
import { runQueuedInAppAtOnce } from "./in-app-at-once.ts";
import type { FailedTask, NewTask } from "./queue/port.ts";
import { newDetail } from "./records.ts";
import * as engine from "./repository.ts";
import { mergeFollowingSteps } from "./steps/digest.ts";
import { type Deferred, type MessageListener, type StepOutcome, tenantOf } from "./steps/handler.ts";
import { handlerFor, type Loading, readsPreferences, runStep } from "./steps/index.ts";

export type { MessageListener } from "./steps/handler.ts";

/** The statuses a job's task finds it in when it has something to do. */
const RUNNABLE = ["pending", "queued", "delayed", "running"] as const satisfies readonly JobStatus[];

/** How `finish` settles a job: from the status it was claimed in, counting the attempt then if not before. */
interface Claim {
  from: JobStatus[];
  countAttempt: boolean;
}

/** Thrown inside `finish` to roll back what it wrote for a job that was settled meanwhile. */
class Superseded extends Error {}

/**
 * Runs one job (the queue's `engine.run-job` task). Safe to run twice for one job: a job that has
 * reached a final state is left alone, claiming it is one conditional update (a cancel racing it
 * either wins or loses, never both), and an in-app message is unique per job. No transaction is
 * held while a step delivers; the outcome and the next job's task are written together afterwards.
 */
export async function runJob(
  deps: EngineDeps,
  jobId: string,
  context: { attempt: number; maxAttempts?: number; onMessage?: MessageListener },
): Promise<void> {
  const found = await engine.findJobWithNotification(deps.db, jobId);
  // Canceled, finished, or never existed (nor its notification): nothing to do.
  if (!found || !(RUNNABLE as readonly string[]).includes(found.job.status)) return;
  // A due delay with an in-app step after it joins the due delays this process runs together; one
  // the batch could not run runs here.
  if (joinsDueDelays(deps, found.job, found.notification)) {
    const batch = await runDueDelay(deps, found.job, found.notification, context.onMessage);
    if (batch.ran) {
      // The run goes on in this task, as after a delay run here (see runFrom's end), with the
      // subscriber the batch read.
      if (batch.next)
        await goOn(
          deps,
          batch.next.job,
          { notification: found.notification, subscriber: { read: batch.next.subscriber } },
          context.onMessage,
        );
      return;
    }
  }
  await runFrom(deps, found.job, { notification: found.notification }, context);
}

/** What the step before a job read that the job would read again: its notification and subscriber. */
interface Known {
  notification: Notification;
  /** Present when the step before read the subscriber (undefined inside: no such subscriber then). */
  subscriber?: { read: Awaited<ReturnType<typeof getSubscriberByRef>> };
}

/** runJob from the job as read, or as the step before it queued it (with what that step read). */
async function runFrom(
  deps: EngineDeps,
  seen: Job,
  known: Known,
  context: {
    attempt: number;
    maxAttempts?: number;
    onMessage?: MessageListener;
    /**
     * Run on from the step before it, in that step's task (see `finish`): a step that must be
     * claimed first is left to its own task.
     */
    following?: boolean;
  },
): Promise<void> {
  const jobId = seen.id;
  // A step that reaches outside the database is claimed first (`running`: a cancel no longer takes
  // it); any other is claimed by the transaction that records its outcome, from the status it was
  // read in, and rolled back if that moved meanwhile (a cancel won, or another run of the job).
  const claims = handlerFor(seen).claims;
  if (claims && context.following) return;
  const job = claims
    ? await engine.moveJob(deps.db, jobId, RUNNABLE, "running", isoNow(deps.clock), { countAttempt: true })
    : seen;
  if (!job) return;
  const claim: Claim = claims
    ? { from: ["running"], countAttempt: false }
    : { from: [seen.status], countAttempt: true };
  // What the step reads, read at once rather than one after another: on SQLite under load every
  // read waits for the group commit of the batch it joins, and on PostgreSQL each is a round trip.
  // The preferences are read for a step that may yet be filtered out: one read more for it, one
  // wait less for every other.
  const tenant = tenantOf(job);
  const loading: Loading = Promise.all([
    !job.step.active
      ? undefined
      : known.subscriber
        ? known.subscriber.read
        : getSubscriberByRef(deps, tenant, job.subscriberRef),
    readsPreferences(job)
      ? loadSubscriberPreferences(deps, tenant, job.subscriberRef, job.workflowId)
      : undefined,
  ]);
  // Awaited by the step (runStep below), whose failures are recorded; a step that reads neither
  // leaves it unawaited, and its failure is no one's then.
  loading.catch(() => {});
  const { notification } = known;

  let next: Job | undefined;
  // A failure deciding the step or recording its outcome (an in-app message is written there) is
  // recorded, and the task is retried.
  try {
    const outcome = await runStep(deps, job, notification, loading, context.onMessage);
    // The subscriber as the step read it (an inactive step reads none): an in-app step after this
    // one may run in the same transaction (queueNext).
    const subscriber = job.step.active
      ? await loading.then(
          ([read]) => read,
          () => undefined,
        )
      : undefined;
    next = await finish(deps, job, notification, outcome, claim, {
      subscriber,
      onMessage: context.onMessage,
    });
  } catch (error) {
    await engine.insertDetails(deps.db, [
      newDetail(
        job,
        "Failed",
        context.maxAttempts !== undefined && context.attempt >= context.maxAttempts
          ? `The ${job.type} step failed on its last attempt`
          : `The ${job.type} step failed; it will be retried`,
        isoNow(deps.clock),
        { raw: String(error), isRetry: context.attempt > 1 },
      ),
    ]);
    throw error;
  }
  // The run goes on at once in this task: the next job's own task, committed with this outcome,
  // is there should this process stop now, and finds the job done when it runs. So a delay that
  // falls due delivers what follows it now, not behind every other task that fell due with it.
  // It goes on from the job as queued, with this run's notification and subscriber: none is read
  // again. A failure here is recorded, and that task runs the job again.
  if (next === undefined) return;
  // A read that failed is left to the next step to make again.
  const subscriber = job.step.active
    ? await loading.then(
        ([read]) => ({ read }),
        () => undefined,
      )
    : undefined;
  await goOn(deps, next, { notification, ...(subscriber ? { subscriber } : {}) }, context.onMessage);
}

/**
 * Runs the run on from `next`, the job the step before queued with its task, in that step's task;
 * a failure is recorded, and that task runs the job again.
 */
function goOn(
  deps: EngineDeps,
  next: Job,
  known: Known,
  onMessage: MessageListener | undefined,
): Promise<void> {
  return runFrom(deps, next, known, {
    attempt: 1,
    following: true,
    ...(onMessage ? { onMessage } : {}),
  }).catch(() => {});
}

/**
 * Records the outcome and moves the run on, in one transaction: the job's status, its execution
 * detail, and the next step's task (or, for a delay, this job's task at its due time; for a merged
 * digest event, the rest of its run merged too). A deferred outcome is decided in that transaction.
 */
async function finish(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  decision: StepOutcome | Deferred,
  claim: Claim,
  following: { subscriber: Subscriber | undefined; onMessage: MessageListener | undefined },
): Promise<Job | undefined> {
  const now = isoNow(deps.clock);
  let armed: { dueAt: number; task: NewTask } | undefined;
  let queued: Job | undefined;
  let afterCommit: (() => void)[] = [];
  try {
    await deps.db.transaction().execute(async (trx) => {
      afterCommit = [];
      const trxDeps = engineOnConnection(deps, trx);
      const deferred = "inTransaction" in decision;
      const outcome = deferred ? await decision.inTransaction(trxDeps) : decision;
      const changes = outcome.digest !== undefined ? { digest: outcome.digest } : {};
      // A deferred outcome wrote rows of its own: keep them only if the job is still ours.
      const settled = () => {
        if (deferred) throw new Superseded();
      };
      if (outcome.status === "delayed" && outcome.dueAt !== undefined) {
        const moved = await engine.settleJob(trx, job.id, claim.from, "delayed", now, {
          ...changes,
          countAttempt: claim.countAttempt,
          runAt: new Date(outcome.dueAt).toISOString(),
        });
        if (!moved) return settled();
        await engine.insertDetails(trx, [newDetail(job, outcome.executionStatus, outcome.detail, now)]);
        // Its own key: this job's current task (perhaps an earlier due task) still runs while this is added.
        const task = outcome.dueTask ?? {
          ...runJobTask(job.id, outcome.dueAt),
          key: `job:${job.id}:due:${moved.attempts}`,
        };
        await deps.queue.add(trx, [task]);
        armed = { dueAt: outcome.dueAt, task };
        return;
      }
      const stops =
        outcome.status === "canceled" ||
        (outcome.status === "failed" && (job.step.shouldStopOnFail || outcome.stopsRun));
      // The run's last step has no next job to look for.
      const goesOn =
        outcome.status !== "merged" && !stops && job.stepIndex + 1 < notification.channels.length;
      const detail = newDetail(job, outcome.executionStatus, outcome.detail, now, { raw: outcome.raw ?? "" });
      // A next in-app step may run here (queueNext): its detail and this one then go out in one
      // insert, and this one is held until then.
      const nextInApp =
        goesOn && following.subscriber !== undefined && notification.channels[job.stepIndex + 1] === "in_app";
      const pending = nextInApp ? [detail] : [];
      // The detail (unless held) goes out with the settle, without waiting for its answer (one round
      // trip on PostgreSQL), and so does the next job's queueing when the run goes on, with its
      // subscriber's preferences when it is an in-app step that may run here: a job that was not
      // ours to settle rolls them all back.
      const [moved, , queuedNext, preferences] = await pipelined(trx, [
        (db) =>
          engine.settleJob(db, job.id, claim.from, outcome.status, now, {
            ...changes,
            countAttempt: claim.countAttempt,
          }),
        async (db) => (nextInApp ? undefined : engine.insertDetails(db, [detail])),
        async (db) =>
          goesOn ? engine.queueJobAt(db, job.notificationId, job.stepIndex + 1, now) : undefined,
        async (db) =>
          nextInApp
            ? loadSubscriberPreferences(
                engineOnConnection(deps, db),
                tenantOf(job),
                job.subscriberRef,
                job.workflowId,
              )
            : undefined,
      ]);
      if (!moved) throw new Superseded();
      if (outcome.status === "merged") {
        await mergeFollowingSteps(trxDeps, job, now);
        return;
      }
      if (stops) {
        await engine.cancelJobsAfter(trx, job.notificationId, job.stepIndex, now);
        return;
      }
      if (goesOn)
        queued = await queueNext(trxDeps, job, now, {
          notification,
          ...following,
          afterCommit,
          first: { queued: queuedNext, ...(preferences ? { preferences } : {}) },
          pending,
        });
    });
  } catch (error) {
    if (error instanceof Superseded) return undefined;
    throw error;
  }
  if ("inTransaction" in decision) decision.afterCommit?.();
  for (const told of afterCommit) told();
  deps.queue.wake();
  // A queue that keeps real time (graphile-worker under a test's ManualClock) would run the task only
  // when the same delay has passed in real time: the business clock's timer enqueues it when due by
  // that clock. The real-time task stays as the durable fallback; whichever comes second finds
  // nothing left to do.
  const timer = armed as { dueAt: number; task: NewTask } | undefined;
  if (timer && !deps.queue.runAtFollowsClock) {
    deps.clock.at(timer.dueAt, () => {
      const { runAt: _runAt, ...now } = timer.task;
      // Returned: a ManualClock keeps the promise, so that a test can wait for the task to be added.
      return deps.queue
        .add(deps.db, [{ ...now, key: `${timer.task.key ?? job.id}:by-clock` }])
        .then(() => deps.queue.wake())
        .catch(() => {
          // The real-time task still runs it; a closed queue at shutdown lands here.
        });
    });
  }
  return queued;
}

/**
 * Queues the run's next job, if it is pending, with its task; the job as queued when it was. With
 * `atOnce` (the step before read the subscriber), a next job that can run at once (an in-app step:
 * in-app-at-once.ts) runs in this transaction instead, without a task, and the job after it is
 * looked at in turn; the first that cannot is queued with its task and returned. What must be told
 * once the transaction has committed (the inbox, of a new message) goes to `atOnce.afterCommit`.
 */
async function queueNext(
  deps: EngineDeps,
  job: Job,
  now: string,
  atOnce?: {
    notification: Notification;
    subscriber: Subscriber | undefined;
    onMessage: MessageListener | undefined;
    afterCommit: (() => void)[];
    /** The next job as the caller queued it (undefined: it was not pending), and what it read for it. */
    first?: { queued: Job | undefined; preferences?: SubscriberPreferences };
    /** Details the caller has yet to write: with the first step run here, else once the run is queued. */
    pending?: ExecutionDetail[];
  },
): Promise<Job | undefined> {
  const queued = await queueFollowing(deps, job, now, atOnce);
  const pending = atOnce?.pending ?? [];
  if (pending.length > 0) await engine.insertDetails(deps.db, pending.splice(0));
  return queued;
}

async function queueFollowing(
  deps: EngineDeps,
  job: Job,
  now: string,
  atOnce: Parameters<typeof queueNext>[3],
): Promise<Job | undefined> {
  for (let index = job.stepIndex + 1; ; index++) {
    const first = index === job.stepIndex + 1 ? atOnce?.first : undefined;
    const queued = first ? first.queued : await engine.queueJobAt(deps.db, job.notificationId, index, now);
    if (!queued) return undefined;
    const ran =
      atOnce?.subscriber &&
      (await runQueuedInAppAtOnce(
        deps,
        queued,
        atOnce.notification,
        atOnce.subscriber,
        now,
        atOnce.onMessage,
        first?.preferences,
        atOnce.pending,
      ));
    if (!ran) {
      await deps.queue.add(deps.db, [runJobTask(queued.id)]);
      return queued;
    }
    if (ran.afterCommit) atOnce.afterCommit.push(ran.afterCommit);
    if (index + 1 >= atOnce.notification.channels.length) return undefined;
  }
}

/**
 * A job whose task was given up after its last attempt: `failed`, with the reason; with
 * `shouldStopOnFail` the rest of the run is canceled, otherwise the next step goes on.
 */
export async function jobGivenUp(deps: EngineDeps, task: FailedTask, error: unknown): Promise<void> {
  const jobId = String(task.payload.jobId ?? "");
  const now = isoNow(deps.clock);
  await deps.db.transaction().execute(async (trx) => {
    const job = await engine.moveJob(trx, jobId, ["running", "queued", "pending", "delayed"], "failed", now);
    if (!job) return;
    await engine.insertDetails(trx, [
      newDetail(job, "Failed", `The ${job.type} step failed for good after ${task.attempts} attempts`, now, {
        raw: String(error),
      }),
    ]);
    if (job.step.shouldStopOnFail) await engine.cancelJobsAfter(trx, job.notificationId, job.stepIndex, now);
    else await queueNext(engineOnConnection(deps, trx), job, now);
  });
  deps.queue.wake();
}
