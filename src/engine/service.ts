import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import type { SubscriberErasure } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { Job } from "./domain.ts";
import { type EngineDeps, TASKS } from "./engine-deps.ts";
import { fanOut, fanOutGivenUp } from "./fan-out.ts";
import * as messages from "./message-repository.ts";
import type { TaskHandler } from "./queue/port.ts";
import * as engine from "./repository.ts";
import { jobGivenUp, type MessageListener, runJob } from "./run-job.ts";
import {
  cancelWaitingEvents,
  closeDigestWindow,
  deliveringOthers,
  lockTransactionWindows,
} from "./steps/digest.ts";

export type { Accepted, BulkOutcome, EngineDeps, Recipient, TriggerAck, TriggerRequest } from "./accept.ts";
export { acceptBulk, acceptTrigger, INLINE_RECIPIENTS } from "./accept.ts";
export type {
  ChannelSenders,
  ChatSender,
  DeliveryResult,
  EmailSender,
  OutgoingEmail,
  Sender,
} from "./channel-senders.ts";
export { previewStep, type StepPreview } from "./preview.ts";
export { registerOpenJobsFolding } from "./quotas.ts";
export type { RenderLimits } from "./render.ts";
export { Renderer } from "./renderer.ts";
export type { MessageListener } from "./run-job.ts";
export { addUnits } from "./time-units.ts";

/** The worker's tasks: what the queue runs for the engine, and what it does with a task given up. */
export function engineTasks(deps: EngineDeps, onMessage?: MessageListener) {
  const handlers: Record<string, TaskHandler> = {
    [TASKS.runJob]: (payload, context) =>
      runJob(deps, String(payload.jobId), {
        attempt: context.attempt,
        maxAttempts: context.maxAttempts,
        ...(onMessage ? { onMessage } : {}),
      }),
    [TASKS.fanOut]: (payload) => fanOut(deps, String(payload.triggerId), onMessage),
    [TASKS.closeDigest]: (payload) => closeDigestWindow(deps, String(payload.windowId)),
  };
  return {
    handlers,
    onFailed: async (task: Parameters<typeof jobGivenUp>[1], error: unknown) => {
      if (task.task === TASKS.runJob) await jobGivenUp(deps, task, error);
      if (task.task === TASKS.fanOut) await fanOutGivenUp(deps, String(task.payload.triggerId));
    },
  };
}

/**
 * Cancels everything of the transaction that has not run yet (pending, queued, delayed, and events
 * waiting in a digest window that is still open); true when anything was. One transaction, holding
 * the locks of the digest windows involved: a window's close and this cancel happen one after the
 * other, so an event is either delivered in its digest or canceled, never both. A run that carries a
 * closed digest of other triggers' events too goes on: those events are delivered, not canceled.
 */
export async function cancelTrigger(deps: Deps, tenant: Tenant, transactionId: string): Promise<boolean> {
  return inTransaction(deps, async ({ db }) => {
    const now = isoNow(deps.clock);
    await lockTransactionWindows({ db }, tenant.environmentId, transactionId);
    const waiting = await cancelWaitingEvents({ db }, tenant.environmentId, transactionId, now);
    const keep = await deliveringOthers({ db }, tenant.environmentId, transactionId);
    const canceled = await engine.cancelTransactionJobs(db, tenant.environmentId, transactionId, now, keep);
    return waiting + canceled.length > 0;
  });
}

/**
 * When a subscriber is deleted (inside the delete's transaction): its jobs that have not run are
 * canceled and its messages removed. A job running meanwhile writes its message only while the
 * subscriber exists (run-job's inApp holds the row), so none is left behind.
 */
export async function forgetSubscriber(deps: Deps, tenant: Tenant, subscriberRef: string): Promise<void> {
  await engine.cancelSubscriberJobs(deps.db, tenant.environmentId, subscriberRef, isoNow(deps.clock));
  await messages.eraseSubscriberMessages(deps.db, tenant.environmentId, subscriberRef);
}

/** The engine's side of deleting a subscriber, for the subscriber routes (wired in app.ts). */
export const engineSubscriberErasure: SubscriberErasure = { forget: forgetSubscriber };

/** The notifications' jobs, by notification and step (the activity views show them with their details). */
export async function jobsOfNotifications(deps: Deps, notificationIds: string[]): Promise<Job[]> {
  return engine.jobsOfNotifications(deps.db, notificationIds);
}

declare module "fastify" {
  interface FastifyInstance {
    /** The job queue the engine's work goes through (src/engine/queue). */
    queue: import("./queue/port.ts").JobQueue;
    /** The environments' quotas a trigger must fit (src/engine/quotas.ts). */
    quotas: import("../config.ts").Quotas | undefined;
    /** Renders the in-app steps a trigger delivers in its acknowledgement, within the configured limits. */
    renderer: import("./renderer.ts").Renderer;
    /** Told of each in-app message a trigger delivers in its acknowledgement (the inbox's sockets). */
    inAppListener: MessageListener | undefined;
  }
}

/** The engine's dependencies for a request: the app's store (or a transaction), clock, secrets and queue. */
export function engineDepsOf(
  app: {
    store: { db: Deps["db"] };
    clock: Deps["clock"];
    secrets?: Deps["secrets"];
    queue: import("./queue/port.ts").JobQueue;
    quotas?: import("../config.ts").Quotas | undefined;
    renderer?: import("./renderer.ts").Renderer;
    inAppListener?: MessageListener | undefined;
  },
  db: Deps["db"] = app.store.db,
): EngineDeps {
  return {
    db,
    clock: app.clock,
    secrets: app.secrets,
    queue: app.queue,
    quotas: app.quotas,
    renderer: app.renderer,
    onMessage: app.inAppListener,
  };
}
