import { isoNow } from "../clock.ts";
import { newObjectId } from "../ids.ts";
import { pipelined } from "../store/pipeline.ts";
import { type Subscriber, subscriberForTemplates } from "../subscribers/domain.ts";
import {
  decideStep,
  getSubscriberByRef,
  holdSubscriber,
  isChannelStep,
  loadSubscriberPreferences,
} from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { subscriptionPreferenceForStep } from "../topics/service.ts";
import { TIME_UNITS } from "../workflows/domain.ts";
import { type EngineDeps, engineOnConnection, runJobTask } from "./accept.ts";
import { deliverChat, deliverEmail, newMessage } from "./delivery.ts";
import { arriveAtDigest, digestedEvents, mergeFollowingSteps } from "./digest.ts";
import type { ExecutionDetail, ExecutionStatus, Job, Message, Notification } from "./domain.ts";
import { stepPasses } from "./filters.ts";
import { assembleInApp, inAppTemplateFields } from "./in-app-template.ts";
import { deleteMessage, insertMessage } from "./message-repository.ts";
import type { FailedTask, NewTask } from "./queue/port.ts";
import { templateData } from "./render.ts";
import { defaultRenderer, fieldsToRender, renderLimitDetail } from "./renderer.ts";
import * as engine from "./repository.ts";
import type { StepOutcome } from "./step-outcome.ts";
import { runCodeStep } from "./steps/bridge.ts";
import { passThrottle, throttleSettingsOf } from "./steps/throttle.ts";
import { addUnits } from "./time-units.ts";

/** What a step's handler decided: the job's final status (or `delayed`), and what to record. */
type Outcome = StepOutcome;

/**
 * An outcome that can only be decided inside the transaction that records it (a digest: joining a
 * window and being recorded as its member are one step; an in-app message: written and recorded as
 * delivered in one commit). `afterCommit` runs once that transaction has committed.
 */
interface Deferred {
  inTransaction: (deps: EngineDeps) => Promise<Outcome>;
  afterCommit?: () => void;
}

/** Thrown inside `finish` to roll back what it wrote for a job that was settled meanwhile. */
class Superseded extends Error {}

/**
 * Told when a job's message is created, so the inbox can tell the subscriber's sockets. `written`
 * is the message as stored and its subscriber as the job read it: a listener in this process need
 * not read them again.
 */
export type MessageListener = (event: {
  environmentId: string;
  subscriberRef: string;
  messageId: string;
  written?: { message: Message; subscriber: Subscriber };
}) => void;

const tenantOf = (job: Pick<Job, "organizationId" | "environmentId">): Tenant => ({
  organizationId: job.organizationId,
  environmentId: job.environmentId,
  actorId: "",
});

function detailOf(job: Job, status: ExecutionStatus, detail: string, now: string, raw = "", isRetry = false) {
  return {
    id: newObjectId(),
    organizationId: job.organizationId,
    environmentId: job.environmentId,
    jobId: job.id,
    notificationId: job.notificationId,
    subscriberRef: job.subscriberRef,
    status,
    detail,
    raw,
    isRetry,
    createdAt: now,
  } satisfies ExecutionDetail;
}

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
  const job = await engine.moveJob(
    deps.db,
    jobId,
    ["pending", "queued", "delayed", "running"],
    "running",
    isoNow(deps.clock),
    { countAttempt: true },
  );
  // Canceled, finished, or never existed: nothing to do.
  if (!job) return;
  // What the step reads, read at once rather than one after another: on SQLite under load every
  // read waits for the group commit of the batch it joins, and on PostgreSQL each is a round trip.
  // The preferences are read for a step that may yet be filtered out: one read more for it, one
  // wait less for every other.
  const tenant = tenantOf(job);
  const loading: Loading = Promise.all([
    job.step.active ? getSubscriberByRef(deps, tenant, job.subscriberRef) : undefined,
    job.step.active && job.type !== "delay"
      ? loadSubscriberPreferences(deps, tenant, job.subscriberRef, job.workflowId)
      : undefined,
  ]);
  // Awaited in decide(), whose failures are recorded; not at all when the notification is gone.
  loading.catch(() => {});
  const notification = await engine.findNotification(deps.db, job.notificationId);
  if (!notification) return;

  // A failure deciding the step or recording its outcome (an in-app message is written there) is
  // recorded, and the task is retried.
  try {
    const outcome = await decide(deps, job, notification, loading, context.onMessage);
    await finish(deps, job, notification, outcome);
  } catch (error) {
    await engine.insertDetails(deps.db, [
      detailOf(
        job,
        "Failed",
        context.maxAttempts !== undefined && context.attempt >= context.maxAttempts
          ? `The ${job.type} step failed on its last attempt`
          : `The ${job.type} step failed; it will be retried`,
        isoNow(deps.clock),
        String(error),
        context.attempt > 1,
      ),
    ]);
    throw error;
  }
}

/** The job's subscriber and its preferences, as read when the job started. */
type Loading = Promise<
  [
    Awaited<ReturnType<typeof getSubscriberByRef>>,
    Awaited<ReturnType<typeof loadSubscriberPreferences>> | undefined,
  ]
>;

async function decide(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  loading: Loading,
  onMessage: MessageListener | undefined,
): Promise<Outcome | Deferred> {
  const { step } = job;
  if (!step.active) return { status: "skipped", executionStatus: "Success", detail: "The step is inactive" };
  const [subscriber, preferences] = await loading;
  if (!subscriber)
    return { status: "skipped", executionStatus: "Warning", detail: "The subscriber no longer exists" };

  // A step defined in code runs through its app's bridge (steps/bridge.ts); a channel step's does
  // once the subscriber's preferences let it, below.
  if (job.step.code && !isChannelStep(job.type))
    return runCodeStep(deps, job, notification, subscriber, onMessage);

  // A delay that has waited its time passes on at once, whatever else it is.
  if (job.type === "delay") return delay(deps, job, notification);

  const filter = stepPasses(step.filters, {
    payload: notification.payload,
    subscriber: subscriberForTemplates(subscriber),
    tenant: notification.tenant,
    now: deps.clock.now(),
  });
  if (!filter.passed) return { status: "skipped", executionStatus: "Success", detail: "filtered" };

  // A notification that came through a topic: that subscription's preference for the workflow too.
  const subscription =
    notification.topicId !== "" && isChannelStep(job.type)
      ? await subscriptionPreferenceForStep(
          deps,
          notification.topicId,
          job.subscriberRef,
          job.workflowId,
          notification.payload,
        )
      : undefined;
  const decision = decideStep(job.type, {
    critical: notification.workflow.critical,
    preferenceSettings: notification.workflow.preferenceSettings,
    ...preferences,
    now: deps.clock.now(),
    timezone: subscriber.timezone,
    subscription,
  });
  if (!decision.run)
    return { status: "skipped", executionStatus: "Success", detail: `Skipped: ${decision.reason}` };
  if (job.step.code) return runCodeStep(deps, job, notification, subscriber, onMessage);

  switch (job.type) {
    case "in_app":
      return inApp(deps, job, notification, subscriber, onMessage);
    case "email":
      return deliverEmail(deps, job, notification, subscriber);
    case "chat":
      return deliverChat(deps, job, notification, subscriber);
    case "sms":
    case "push":
      return {
        status: "skipped",
        executionStatus: "Warning",
        detail: `No active ${job.type} integration in this environment`,
      };
    case "digest":
      return { inTransaction: (trxDeps) => arriveAtDigest(trxDeps, job, notification) };
    case "throttle": {
      const settings = throttleSettingsOf(job, notification);
      return { inTransaction: (trxDeps) => passThrottle(trxDeps, job, settings) };
    }
    default:
      return { status: "skipped", executionStatus: "Success", detail: `A ${job.type} step delivers nothing` };
  }
}

function delay(deps: EngineDeps, job: Job, notification: Notification): Outcome {
  const now = deps.clock.now();
  if (job.runAt !== null) {
    const due = Date.parse(job.runAt);
    if (due <= now) return { status: "completed", executionStatus: "Success", detail: "The delay is over" };
    return {
      status: "delayed",
      executionStatus: "Pending",
      detail: `Delayed until ${job.runAt}`,
      dueAt: due,
    };
  }
  const given = notification.overrides.delay;
  const override =
    given === undefined || given === null ? undefined : (given as { amount?: unknown; unit?: unknown });
  const metadata = job.step.metadata;
  if (override !== undefined) {
    const { amount, unit } = typeof override === "object" ? override : {};
    if (
      !Number.isInteger(amount) ||
      (amount as number) <= 0 ||
      !(TIME_UNITS as readonly unknown[]).includes(unit)
    ) {
      return {
        status: "failed",
        executionStatus: "Failed",
        detail: `overrides.delay must be {amount: a positive integer, unit: one of ${TIME_UNITS.join(", ")}}: nothing is sent`,
        stopsRun: true,
      };
    }
  }
  if (metadata.type === "scheduled" && override === undefined) {
    const path = metadata.delayPath ?? "";
    const value = path
      .split(".")
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], notification.payload);
    const due = typeof value === "string" ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(due)) {
      return {
        status: "failed",
        executionStatus: "Failed",
        detail: `payload.${path} is not a date: nothing is sent`,
        stopsRun: true,
      };
    }
    // Judged against the trigger's acceptance, not against when this job happens to run: a date still
    // ahead when the trigger was acknowledged has been promised, and if it passed while the job
    // waited in the queue (a backlog, an earlier step), the message goes now rather than never.
    if (due < Date.parse(notification.createdAt)) {
      return {
        status: "failed",
        executionStatus: "Failed",
        detail: `payload.${path} (${new Date(due).toISOString()}) was already in the past when the trigger was accepted: nothing is sent`,
        stopsRun: true,
      };
    }
    if (due <= now) {
      return {
        status: "completed",
        executionStatus: "Success",
        detail: `The scheduled time ${new Date(due).toISOString()} passed while the step waited: sending now`,
      };
    }
    return {
      status: "delayed",
      executionStatus: "Pending",
      detail: `Delayed until ${new Date(due).toISOString()}`,
      dueAt: due,
    };
  }
  const amount = typeof override?.amount === "number" ? override.amount : metadata.amount;
  const unit = (typeof override?.unit === "string" ? override.unit : metadata.unit) as typeof metadata.unit;
  let due: number;
  try {
    due = addUnits(now, amount, unit);
  } catch (error) {
    return {
      status: "failed",
      executionStatus: "Failed",
      detail: `A delay of ${amount} ${unit} cannot be waited: nothing is sent`,
      raw: String(error),
      stopsRun: true,
    };
  }
  return {
    status: "delayed",
    executionStatus: "Pending",
    detail: `Delayed ${amount} ${unit}, until ${new Date(due).toISOString()}`,
    dueAt: due,
  };
}

/** The feed an in-app step names (`_feedId`, or `feedId` as written), as Novu's message records it. */
function feedOf(template: Job["step"]["template"]): string {
  const named = typeof template._feedId === "string" ? template._feedId : template.feedId;
  return typeof named === "string" ? named : "";
}

async function inApp(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: NonNullable<Awaited<ReturnType<typeof getSubscriberByRef>>>,
  onMessage: MessageListener | undefined,
): Promise<Deferred | Outcome> {
  const template = job.step.template;
  const data = templateData({
    payload: notification.payload,
    subscriber: subscriberForTemplates(subscriber),
    tenant: notification.tenant,
    actor: notification.actor,
    events: await digestedEvents(deps, job, notification),
  });
  const rendering = await (deps.renderer ?? defaultRenderer()).render(
    fieldsToRender("in_app", inAppTemplateFields(template)),
    data,
  );
  if (!rendering.ok) {
    return { status: "failed", executionStatus: "Failed", detail: renderLimitDetail(job.type, rendering) };
  }
  const rendered = assembleInApp(template, rendering.fields, rendering.problems);
  const now = isoNow(deps.clock);
  const { problems } = rendered;
  let created: Message | undefined;
  const message = newMessage(job, notification, subscriber, now, {
    channel: "in_app",
    content: rendered.content,
    subject: rendered.subject,
    cta: rendered.cta,
    data: rendered.data,
    avatar: rendered.avatar,
    feedId: feedOf(template),
  });
  // The message commits with the job's outcome (see `finish`): one commit a message, and a job
  // settled meanwhile (a cancel won) rolls its message back with it. Written while the subscriber's
  // row is held: a delete of the subscriber either waits for this message and removes it with the
  // rest, or has happened and nothing is kept. The hold and the message go out together (one round
  // trip on PostgreSQL, where the insert runs once the hold has its lock); a message written for a
  // subscriber found gone is taken back in the same transaction.
  const inTransaction = async (trxDeps: EngineDeps): Promise<Outcome> => {
    created = undefined;
    const [held, written] = await pipelined(trxDeps.db, [
      (db) => holdSubscriber({ ...trxDeps, db }, tenantOf(job), job.subscriberRef),
      (db) => insertMessage(db, message),
    ]);
    if (!held) {
      if (written.created) await deleteMessage(trxDeps.db, written.message.id);
      return { status: "skipped", executionStatus: "Warning", detail: "The subscriber no longer exists" };
    }
    if (written.created) created = written.message;
    return {
      status: "completed",
      executionStatus: problems.length > 0 ? "Warning" : "Success",
      detail: written.created ? "In-app message created" : "In-app message was already created",
      raw: problems.join("; "),
    };
  };
  return {
    inTransaction,
    afterCommit: () => {
      if (created !== undefined)
        onMessage?.({
          environmentId: job.environmentId,
          subscriberRef: job.subscriberRef,
          messageId: created.id,
          written: { message: created, subscriber },
        });
    },
  };
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
  decision: Outcome | Deferred,
): Promise<void> {
  const now = isoNow(deps.clock);
  let armed: { dueAt: number; task: NewTask } | undefined;
  try {
    await deps.db.transaction().execute(async (trx) => {
      const trxDeps = engineOnConnection(deps, trx);
      const deferred = "inTransaction" in decision;
      const outcome = deferred ? await decision.inTransaction(trxDeps) : decision;
      const changes = outcome.digest !== undefined ? { digest: outcome.digest } : {};
      // A deferred outcome wrote rows of its own: keep them only if the job is still ours.
      const settled = () => {
        if (deferred) throw new Superseded();
      };
      if (outcome.status === "delayed" && outcome.dueAt !== undefined) {
        const moved = await engine.settleJob(trx, job.id, ["running"], "delayed", now, {
          ...changes,
          runAt: new Date(outcome.dueAt).toISOString(),
        });
        if (!moved) return settled();
        await engine.insertDetails(trx, [detailOf(job, outcome.executionStatus, outcome.detail, now)]);
        // Its own key: this job's current task (perhaps an earlier due task) still runs while this is added.
        const task = outcome.dueTask ?? {
          ...runJobTask(job.id, outcome.dueAt),
          key: `job:${job.id}:due:${moved.attempts}`,
        };
        await deps.queue.add(trx, [task]);
        armed = { dueAt: outcome.dueAt, task };
        return;
      }
      // The detail goes out with the settle, without waiting for its answer (one round trip on
      // PostgreSQL): a job that was not ours to settle rolls both back.
      const [moved] = await pipelined(trx, [
        (db) => engine.settleJob(db, job.id, ["running"], outcome.status, now, changes),
        (db) =>
          engine.insertDetails(db, [
            detailOf(job, outcome.executionStatus, outcome.detail, now, outcome.raw ?? ""),
          ]),
      ]);
      if (!moved) throw new Superseded();
      if (outcome.status === "merged") {
        await mergeFollowingSteps(trxDeps, job, now);
        return;
      }
      if (
        outcome.status === "canceled" ||
        (outcome.status === "failed" && (job.step.shouldStopOnFail || outcome.stopsRun))
      ) {
        await engine.cancelJobsAfter(trx, job.notificationId, job.stepIndex, now);
        return;
      }
      // The run's last step has no next job to look for.
      if (job.stepIndex + 1 < notification.channels.length) await queueNext(trxDeps, job, now);
    });
  } catch (error) {
    if (error instanceof Superseded) return;
    throw error;
  }
  if ("inTransaction" in decision) decision.afterCommit?.();
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
}

async function queueNext(deps: EngineDeps, job: Job, now: string): Promise<void> {
  const queued = await engine.queueJobAt(deps.db, job.notificationId, job.stepIndex + 1, now);
  if (queued) await deps.queue.add(deps.db, [runJobTask(queued)]);
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
      detailOf(
        job,
        "Failed",
        `The ${job.type} step failed for good after ${task.attempts} attempts`,
        now,
        String(error),
      ),
    ]);
    if (job.step.shouldStopOnFail) await engine.cancelJobsAfter(trx, job.notificationId, job.stepIndex, now);
    else await queueNext(engineOnConnection(deps, trx), job, now);
  });
  deps.queue.wake();
}
