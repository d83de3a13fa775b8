import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { mention, notFound } from "../errors.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import {
  findSubscriberRefs,
  getSubscriber,
  getSubscriberByRef,
  type SubscriberErasure,
} from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { Channel } from "../workflows/domain.ts";
import { type EngineDeps, TASKS } from "./accept.ts";
import {
  cancelWaitingEvents,
  closeDigestWindow,
  deliveringOthers,
  lockTransactionWindows,
} from "./digest.ts";
import type { ExecutionDetail, Job, Message, Notification } from "./domain.ts";
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
  await messages.deleteMessages(deps.db, tenant.environmentId, { subscriberRef });
}

/** The engine's side of deleting a subscriber, for the subscriber routes (wired in app.ts). */
export const engineSubscriberErasure: SubscriberErasure = { forget: forgetSubscriber };

// ---------------------------------------------------------------- the subscriber's feed

export interface FeedInput {
  page?: number;
  limit?: number;
  seen?: boolean;
  read?: boolean;
  payload?: Record<string, unknown>;
}

export const FEED_PAGE_SIZE = 10;

/** A page of the subscriber's in-app messages, newest first. */
export async function subscriberFeed(deps: Deps, tenant: Tenant, subscriberId: string, input: FeedInput) {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  const page = input.page ?? 0;
  const limit = input.limit ?? FEED_PAGE_SIZE;
  const { totalCount, messages: data } = await messages.feed(deps.db, {
    subscriberRef: subscriber.id,
    channel: "in_app",
    ...(input.seen !== undefined ? { seen: input.seen } : {}),
    ...(input.read !== undefined ? { read: input.read } : {}),
    ...(input.payload ? { payload: input.payload } : {}),
    offset: page * limit,
    limit,
  });
  return { page, pageSize: limit, totalCount, hasMore: (page + 1) * limit < totalCount, data, subscriber };
}

/** How many of the subscriber's in-app messages are unseen (or match `seen`/`read`). */
export async function countSubscriberMessages(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  filter: { seen?: boolean; read?: boolean },
): Promise<number> {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  return messages.countMessages(deps.db, subscriber.id, "in_app", filter);
}

/**
 * A change to a subscriber's in-app feed: a message created (`messageId`), marked or deleted. The
 * inbox's real-time side (src/widgets) is told of each one after it is committed, and tells the
 * subscriber's sockets; features below it are handed the listener through app.ts.
 */
export interface InboxChange {
  environmentId: string;
  subscriberRef: string;
  messageId?: string;
}
export type InboxListener = (change: InboxChange) => void;

/** Tells `listener` of each subscriber whose in-app messages are among `changed`. */
export function announceInboxChanges(
  listener: InboxListener | undefined,
  changed: readonly Pick<Message, "environmentId" | "subscriberRef" | "channel">[],
): void {
  if (!listener) return;
  const seen = new Set<string>();
  for (const message of changed) {
    if (message.channel !== "in_app" || seen.has(message.subscriberRef)) continue;
    seen.add(message.subscriberRef);
    listener({ environmentId: message.environmentId, subscriberRef: message.subscriberRef });
  }
}

/** One of the subscriber's in-app messages, with the subscriber; undefined when either is gone. */
export async function findSubscriberMessage(
  deps: Deps,
  tenant: Tenant,
  subscriberRef: string,
  messageId: string,
): Promise<{ message: Message; subscriber: Subscriber } | undefined> {
  const [message, subscriber] = await Promise.all([
    messages.findMessage(deps.db, tenant.environmentId, messageId),
    getSubscriberByRef(deps, tenant, subscriberRef),
  ]);
  if (!message || !subscriber || message.subscriberRef !== subscriberRef) return undefined;
  return { message, subscriber };
}

/** The subscriber's unseen and unread in-app message counts, by our id for the subscriber. */
export async function inboxCounts(
  deps: Deps,
  subscriberRef: string,
): Promise<{ unseenCount: number; unreadCount: number }> {
  const [unseenCount, unreadCount] = await Promise.all([
    messages.countMessages(deps.db, subscriberRef, "in_app", { seen: false }),
    messages.countMessages(deps.db, subscriberRef, "in_app", { read: false }),
  ]);
  return { unseenCount, unreadCount };
}

export type MarkAs = "read" | "seen" | "unread" | "unseen";

export function changesFor(markAs: MarkAs): messages.MarkChanges {
  switch (markAs) {
    case "read":
      return { read: true, seen: true };
    case "unread":
      return { read: false };
    case "seen":
      return { seen: true };
    case "unseen":
      return { seen: false, read: false };
  }
}

/** Marks the subscriber's messages; ids of other subscribers' messages change nothing. */
export async function markSubscriberMessages(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  messageIds: string[],
  changes: messages.MarkChanges,
): Promise<{ subscriber: Subscriber; messages: Message[] }> {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  const changed = await messages.markMessages(
    deps.db,
    subscriber.id,
    messageIds,
    changes,
    isoNow(deps.clock),
  );
  return { subscriber, messages: changed };
}

/**
 * Marks all the subscriber's in-app messages as one message is marked (read implies seen, unseen
 * implies unread: see changesFor); returns how many changed.
 */
export async function markAllSubscriberMessages(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  markAs: MarkAs,
): Promise<{ subscriber: Subscriber; count: number }> {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  const count = await messages.markAll(
    deps.db,
    subscriber.id,
    "in_app",
    changesFor(markAs),
    isoNow(deps.clock),
  );
  return { subscriber, count };
}

// ---------------------------------------------------------------- messages

export async function listMessages(
  deps: Deps,
  tenant: Tenant,
  input: {
    channel?: Channel;
    subscriberId?: string;
    transactionIds?: string[];
    page?: number;
    limit?: number;
  },
) {
  const page = input.page ?? 0;
  const limit = input.limit ?? FEED_PAGE_SIZE;
  let subscriberRef: string | undefined;
  if (input.subscriberId !== undefined) {
    subscriberRef = (await findSubscriberRefs(deps, tenant, [input.subscriberId])).get(input.subscriberId);
    if (subscriberRef === undefined)
      return { page, pageSize: limit, totalCount: 0, hasMore: false, data: [] };
  }
  const { totalCount, messages: data } = await messages.listMessages(
    deps.db,
    tenant.environmentId,
    {
      ...(input.channel ? { channel: input.channel } : {}),
      ...(subscriberRef ? { subscriberRef } : {}),
      ...(input.transactionIds ? { transactionIds: input.transactionIds } : {}),
    },
    { offset: page * limit, limit },
  );
  return { page, pageSize: limit, totalCount, hasMore: (page + 1) * limit < totalCount, data };
}

export async function deleteMessage(deps: Deps, tenant: Tenant, messageId: string): Promise<Message> {
  const [deleted] = await messages.deleteMessages(deps.db, tenant.environmentId, { id: messageId });
  if (!deleted) throw notFound(`Message ${mention(messageId, "with this id")} was not found`);
  return deleted;
}

/**
 * Deletes the subscriber's in-app messages: those among `messageIds`, or all of them; others' ids
 * match nothing. Returns those deleted.
 */
export async function deleteSubscriberMessages(
  deps: Deps,
  tenant: Tenant,
  subscriberRef: string,
  messageIds?: string[],
): Promise<Message[]> {
  if (messageIds !== undefined && messageIds.length === 0) return [];
  return messages.deleteMessages(deps.db, tenant.environmentId, {
    subscriberRef,
    channel: "in_app",
    ...(messageIds !== undefined ? { ids: messageIds } : {}),
  });
}

export async function deleteTransactionMessages(deps: Deps, tenant: Tenant, transactionId: string) {
  const deleted = await messages.deleteMessages(deps.db, tenant.environmentId, { transactionId });
  if (deleted.length === 0)
    throw notFound(
      `No messages of transaction ${mention(transactionId, "with this transactionId")} were found`,
    );
  return deleted;
}

// ---------------------------------------------------------------- activity

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
  const limit = input.limit ?? FEED_PAGE_SIZE;
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

/** Records a subscriber's action on one of its messages (a button pressed in the inbox). */
export async function updateMessageAction(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  messageId: string,
  action: { type: string; status: string; payload?: Record<string, unknown> },
): Promise<Message> {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  const updated = await messages.setMessageAction(
    deps.db,
    subscriber.id,
    messageId,
    { status: action.status, result: { type: action.type, payload: action.payload ?? {} } },
    isoNow(deps.clock),
  );
  if (!updated) throw notFound(`Message ${mention(messageId, "with this id")} was not found`);
  return updated;
}
