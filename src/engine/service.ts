import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { mention, notFound } from "../errors.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { findSubscriberRefs, getSubscriberByRef, type SubscriberErasure } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { type EngineDeps, TASKS } from "./accept.ts";
import {
  cancelWaitingEvents,
  closeDigestWindow,
  deliveringOthers,
  lockTransactionWindows,
} from "./digest.ts";
import type { ExecutionDetail, Job, Notification } from "./domain.ts";
import { fanOut } from "./fan-out.ts";
import * as messages from "./message-repository.ts";
import type { TaskHandler } from "./queue/port.ts";
import * as engine from "./repository.ts";
import { jobGivenUp, type MessageListener, runJob } from "./run-job.ts";

export type { EngineDeps, Recipient, TriggerAck, TriggerRequest } from "./accept.ts";
export { acceptTrigger, INLINE_RECIPIENTS } from "./accept.ts";
export type {
  ChannelSenders,
  ChatSender,
  DeliveryResult,
  EmailSender,
  OutgoingEmail,
  Sender,
} from "./channel-senders.ts";
export type { MessageListener } from "./run-job.ts";

/** The worker's tasks: what the queue runs for the engine, and what it does with a task given up. */
export function engineTasks(deps: EngineDeps, onMessage?: MessageListener) {
  const handlers: Record<string, TaskHandler> = {
    [TASKS.runJob]: (payload, context) =>
      runJob(deps, String(payload.jobId), {
        attempt: context.attempt,
        maxAttempts: context.maxAttempts,
        ...(onMessage ? { onMessage } : {}),
      }),
    [TASKS.fanOut]: (payload) => fanOut(deps, String(payload.triggerId)),
    [TASKS.closeDigest]: (payload) => closeDigestWindow(deps, String(payload.windowId)),
  };
  return {
    handlers,
    onFailed: async (task: Parameters<typeof jobGivenUp>[1], error: unknown) => {
      if (task.task === TASKS.runJob) await jobGivenUp(deps, task, error);
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

// ---------------------------------------------------------------- activity

const PAGE_SIZE = 10;

export interface NotificationView {
  notification: Notification;
  subscriber: Subscriber | undefined;
  jobs: (Job & { executionDetails: ExecutionDetail[] })[];
}

async function views(deps: Deps, tenant: Tenant, notifications: Notification[]): Promise<NotificationView[]> {
  const ids = notifications.map((n) => n.id);
  // The jobs and their details as of one moment: a job settles with its detail in one commit, and
  // two separate reads could show it settled without the detail that says why (PostgreSQL:
  // one repeatable-read snapshot; SQLite: one transaction, which no other write interleaves).
  const { jobs, details } = await deps.db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => ({
      jobs: await engine.jobsOfNotifications(trx, ids),
      details: await engine.listDetails(trx, tenant.environmentId, { notificationIds: ids }),
    }));
  const subscribers = new Map<string, Subscriber | undefined>();
  for (const ref of new Set(notifications.map((n) => n.subscriberRef))) {
    subscribers.set(ref, await getSubscriberByRef(deps, tenant, ref));
  }
  return notifications.map((notification) => ({
    notification,
    subscriber: subscribers.get(notification.subscriberRef),
    jobs: jobs
      .filter((job) => job.notificationId === notification.id)
      .map((job) => ({ ...job, executionDetails: details.filter((d) => d.jobId === job.id) })),
  }));
}

export async function listNotifications(
  deps: Deps,
  tenant: Tenant,
  input: {
    page?: number;
    limit?: number;
    workflowIds?: string[];
    subscriberIds?: string[];
    transactionId?: string;
    channels?: string[];
  },
) {
  const page = input.page ?? 0;
  const limit = input.limit ?? PAGE_SIZE;
  let subscriberRefs: string[] | undefined;
  if (input.subscriberIds?.length) {
    subscriberRefs = [...(await findSubscriberRefs(deps, tenant, input.subscriberIds)).values()];
    if (subscriberRefs.length === 0)
      return { page, pageSize: limit, totalCount: 0, hasMore: false, data: [] };
  }
  const { totalCount, notifications } = await engine.listNotifications(
    deps.db,
    tenant.environmentId,
    {
      ...(input.workflowIds?.length ? { workflowIds: input.workflowIds } : {}),
      ...(subscriberRefs ? { subscriberRefs } : {}),
      ...(input.transactionId !== undefined ? { transactionId: input.transactionId } : {}),
      ...(input.channels?.length ? { channels: input.channels } : {}),
    },
    { offset: page * limit, limit },
  );
  return {
    page,
    pageSize: limit,
    totalCount,
    hasMore: (page + 1) * limit < totalCount,
    data: await views(deps, tenant, notifications),
  };
}

export async function getNotification(deps: Deps, tenant: Tenant, id: string): Promise<NotificationView> {
  const notification = await engine.findNotification(deps.db, id, tenant.environmentId);
  if (!notification) throw notFound(`Notification ${mention(id, "with this id")} was not found`);
  const [view] = await views(deps, tenant, [notification]);
  if (!view) throw notFound(`Notification ${mention(id, "with this id")} was not found`);
  return view;
}

export async function listExecutionDetails(
  deps: Deps,
  tenant: Tenant,
  input: { notificationId?: string; subscriberId?: string },
): Promise<ExecutionDetail[]> {
  let subscriberRef: string | undefined;
  if (input.subscriberId !== undefined) {
    subscriberRef = (await findSubscriberRefs(deps, tenant, [input.subscriberId])).get(input.subscriberId);
    if (subscriberRef === undefined) return [];
  }
  return engine.listDetails(deps.db, tenant.environmentId, {
    ...(input.notificationId !== undefined ? { notificationIds: [input.notificationId] } : {}),
    ...(subscriberRef !== undefined ? { subscriberRef } : {}),
  });
}

declare module "fastify" {
  interface FastifyInstance {
    /** The job queue the engine's work goes through (src/engine/queue). */
    queue: import("./queue/port.ts").JobQueue;
  }
}

/** The engine's dependencies for a request: the app's store (or a transaction), clock and queue. */
export function engineDepsOf(
  app: { store: { db: Deps["db"] }; clock: Deps["clock"]; queue: import("./queue/port.ts").JobQueue },
  db: Deps["db"] = app.store.db,
): EngineDeps {
  return { db, clock: app.clock, queue: app.queue };
}
