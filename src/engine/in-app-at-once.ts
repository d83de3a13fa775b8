import { pipelined } from "../store/pipeline.ts";
import type { Subscriber, SubscriberPreferences } from "../subscribers/domain.ts";
import { loadSubscriberPreferences } from "../subscribers/service.ts";
import { subscriptionPreferenceForStep } from "../topics/service.ts";
import type { ExecutionDetail, Job, Notification } from "./domain.ts";
import { type EngineDeps, engineOnConnection } from "./engine-deps.ts";
import { newDetail } from "./records.ts";
import * as engine from "./repository.ts";
import type { MessageListener, StepOutcome } from "./steps/handler.ts";
import { tenantOf } from "./steps/handler.ts";
import { IN_APP_CREATED, inAppAtOnce, writeInApp } from "./steps/in-app.ts";
import { gate } from "./steps/index.ts";

/**
 * In-app steps run at once, inside a transaction that writes anyway (docs/engine.md, "Triggering
 * and the acknowledgement" and "One commit a step"): the trigger's, for a run's leading in-app steps
 * (at-acknowledgement.ts), and the one that records the step before, for an in-app step that follows
 * a step run in the worker (a due delay, a throttle, another in-app step). Either way the message,
 * its execution detail and the job's outcome are written with what the transaction writes already:
 * one commit, and no task of the step's own.
 */

/** A step that can run at once: an active in-app step of a stored workflow. */
export const runsAtOnce = (job: Job): boolean =>
  job.type === "in_app" && job.step.active && job.step.code === undefined;

/**
 * Runs a `queued` job (queued by this transaction, which holds its row) at once, if it can:
 * an in-app step with no digest before it in its run (its templates would see the digested events,
 * read in its own task), whose templates the event loop renders in one go. Its filters, the
 * subscriber's preferences (and a topic subscription's) are asked, then its message is written as
 * its own task would have written it (`writeInApp`: with the subscriber's row held) and the job
 * settled from `queued`, with its detail. Undefined when it cannot run here: the caller gives it
 * its task, as before; nothing has been written then.
 */
export async function runQueuedInAppAtOnce(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  now: string,
  onMessage: MessageListener | undefined,
  /** The subscriber's preferences for the job's workflow, when this transaction has read them. */
  read?: SubscriberPreferences,
  /** Details this transaction has yet to write (the step before's): taken from the list and written with this job's. */
  pending?: ExecutionDetail[],
): Promise<{ outcome: StepOutcome; afterCommit?: () => void } | undefined> {
  if (!runsAtOnce(job) || notification.channels.slice(0, job.stepIndex).includes("digest")) return undefined;
  const tenant = tenantOf(job);
  const [preferences, subscription] = await pipelined(deps.db, [
    async (db) =>
      read ??
      loadSubscriberPreferences(engineOnConnection(deps, db), tenant, job.subscriberRef, job.workflowId),
    async (db) =>
      notification.topicId === ""
        ? undefined
        : subscriptionPreferenceForStep(
            engineOnConnection(deps, db),
            notification.topicId,
            job.subscriberRef,
            job.workflowId,
            notification.payload,
          ),
  ]);
  const refused = gate(deps, job, notification, subscriber, preferences, subscription);
  let outcome: StepOutcome;
  let afterCommit: (() => void) | undefined;
  if (refused) outcome = refused;
  else {
    const made = inAppAtOnce({ deps, job, notification, subscriber });
    if (!made) return undefined;
    const deferred = writeInApp({ job, subscriber, onMessage }, made.message, {
      created: IN_APP_CREATED,
      problems: made.problems,
    });
    outcome = await deferred.inTransaction(deps);
    afterCommit = deferred.afterCommit;
  }
  const [moved] = await pipelined(deps.db, [
    (db) => engine.settleJob(db, job.id, ["queued"], outcome.status, now, { countAttempt: true }),
    (db) =>
      engine.insertDetails(db, [
        ...(pending?.splice(0) ?? []),
        newDetail(job, outcome.executionStatus, outcome.detail, now, { raw: outcome.raw ?? "" }),
      ]),
  ]);
  // The row is this transaction's since it queued the job: a settle that misses it is a defect.
  if (!moved) throw new Error(`job ${job.id} was not queued where this transaction queued it`);
  return afterCommit ? { outcome, afterCommit } : { outcome };
}
