import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import type { Message } from "../engine/domain.ts";
import type { JobQueue, NewTask, TaskHandler } from "../engine/queue/index.ts";
import { badRequest, invalidField, mention, notFound } from "../errors.ts";
import type { Schedule, Subscriber } from "../subscribers/domain.ts";
import {
  applyDefaultSchedule,
  findSubscriberRefs,
  getSubscriber,
  getSubscriberByRef,
  isTimezone,
} from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { Channel } from "../workflows/domain.ts";
import { workflowSummariesByIds } from "../workflows/service.ts";
import type { ActionType, BulkAction, InboxNotification, NotificationMark } from "./domain.ts";
import type { NotificationFilter } from "./filters.ts";
import * as messages from "./repository.ts";
import { type SessionTools, type StartSessionInput, startSession } from "./session.ts";

// ---------------------------------------------------------------- the subscriber's feed

export interface FeedInput {
  page?: number;
  limit?: number;
  seen?: boolean;
  read?: boolean;
  payload?: Record<string, unknown>;
  /** Only the messages of these feeds (Novu's `feedIdentifier`); all when absent or empty. */
  feedIdentifiers?: readonly string[];
}

export const FEED_PAGE_SIZE = 10;

/** Novu's `feedIdentifier`, one or several, as the filter on the environment's feeds (none when empty). */
function feedsFilter(tenant: Tenant, identifiers: readonly string[] | undefined) {
  return identifiers !== undefined && identifiers.length > 0
    ? { feeds: { environmentId: tenant.environmentId, identifiers } }
    : {};
}

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
    ...feedsFilter(tenant, input.feedIdentifiers),
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
  filter: { seen?: boolean; read?: boolean; feedIdentifiers?: readonly string[] },
): Promise<number> {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  const { feedIdentifiers, ...marks } = filter;
  return messages.countMessages(deps.db, subscriber.id, "in_app", {
    ...marks,
    ...feedsFilter(tenant, feedIdentifiers),
  });
}

/**
 * A change to a subscriber's in-app feed: a message created (`messageId`), marked or deleted. The
 * inbox's real-time side (src/widgets, above it) is told of each one after it is committed, and tells
 * the subscriber's sockets; app.ts hands its listener to the inbox routes, and to the engine as its
 * MessageListener.
 */
export interface InboxChange {
  environmentId: string;
  subscriberRef: string;
  messageId?: string;
  /**
   * The new message as stored and its subscriber, when the process that wrote it tells of it: it
   * then needs no read of them again. Never sent to another process.
   */
  written?: { message: Message; subscriber: Subscriber };
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

/**
 * One of the subscriber's in-app messages as a notification (with its workflow), and the subscriber;
 * undefined when either is gone.
 */
export async function findSubscriberMessage(
  deps: Deps,
  tenant: Tenant,
  subscriberRef: string,
  messageId: string,
  written?: InboxChange["written"],
): Promise<{ notification: InboxNotification; subscriber: Subscriber } | undefined> {
  const [message, subscriber] =
    written?.message.id === messageId && written.message.environmentId === tenant.environmentId
      ? [written.message, written.subscriber]
      : await Promise.all([
          messages.findMessage(deps.db, tenant.environmentId, messageId),
          getSubscriberByRef(deps, tenant, subscriberRef),
        ]);
  if (!message || !subscriber || message.subscriberRef !== subscriberRef) return undefined;
  const [notification] = await withWorkflows(deps, tenant, [message]);
  return { notification: notification as InboxNotification, subscriber };
}

/** Unread notifications by severity, and in all. */
export interface UnreadCounts {
  total: number;
  severity: Record<messages.Severity, number>;
}

/**
 * The subscriber's unread in-app messages that its inbox shows (neither archived nor snoozed): what
 * the bell counts.
 */
export async function unreadCounts(deps: Deps, subscriberRef: string): Promise<UnreadCounts> {
  const severity = await messages.unreadBySeverity(deps.db, subscriberRef);
  return { total: severity.high + severity.medium + severity.low + severity.none, severity };
}

/**
 * What the sockets tell a subscriber after every change: the unseen and the unread messages its inbox
 * shows (not the snoozed), the unread as the widget's one number and by severity for Novu's current
 * inbox.
 */
export async function inboxCounts(
  deps: Deps,
  owner: InboxOwner,
): Promise<{ unseenCount: number; unreadCount: number; counts: UnreadCounts }> {
  const [[unseenCount = 0], counts] = await Promise.all([
    messages.countInbox(deps.db, owner, [{ seen: false }]),
    unreadCounts(deps, owner.subscriberRef),
  ]);
  return { unseenCount, unreadCount: counts.total, counts };
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
 * implies unread: see changesFor), or those of these feeds (by identifier); returns how many changed.
 */
export async function markAllSubscriberMessages(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  markAs: MarkAs,
  feedIdentifiers?: readonly string[],
): Promise<{ subscriber: Subscriber; count: number }> {
  const subscriber = await getSubscriber(deps, tenant, subscriberId);
  const count = await messages.markAll(
    deps.db,
    subscriber.id,
    "in_app",
    changesFor(markAs),
    isoNow(deps.clock),
    feedsFilter(tenant, feedIdentifiers).feeds,
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
 * Deletes the subscriber's in-app messages: those among `messageIds`, or all of them (of the feed
 * `feedId` only, when given); others' ids match nothing. Returns those deleted.
 */
export async function deleteSubscriberMessages(
  deps: Deps,
  tenant: Tenant,
  subscriberRef: string,
  messageIds?: string[],
  feedId?: string,
): Promise<Message[]> {
  if (messageIds !== undefined && messageIds.length === 0) return [];
  return messages.deleteMessages(deps.db, tenant.environmentId, {
    subscriberRef,
    channel: "in_app",
    ...(messageIds !== undefined ? { ids: messageIds } : {}),
    ...(feedId !== undefined ? { feedId } : {}),
  });
}

/** Every message of a trigger (of one channel, when `channel` names one); 404 when there is none. */
export async function deleteTransactionMessages(
  deps: Deps,
  tenant: Tenant,
  transactionId: string,
  channel?: Channel,
) {
  const deleted = await messages.deleteMessages(deps.db, tenant.environmentId, {
    transactionId,
    ...(channel === undefined ? {} : { channel }),
  });
  if (deleted.length === 0)
    throw notFound(
      `No messages of transaction ${mention(transactionId, "with this transactionId")}${channel !== undefined ? ` on ${channel}` : ""} were found`,
    );
  return deleted;
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

// ---------------------------------------------------------------- sessions

export interface InboxSessionInput {
  applicationIdentifier: string;
  subscriber?:
    | ({ subscriberId: string; timezone?: string | null | undefined } & StartSessionInput["profile"])
    | undefined;
  /** Older clients name the subscriber at the top. */
  subscriberId?: string | undefined;
  subscriberHash?: string | null | undefined;
  /** The schedule the page gives a subscriber that has none (`isEnabled` left out: on). */
  defaultSchedule?: (Omit<Schedule, "isEnabled"> & { isEnabled?: boolean | undefined }) | null | undefined;
}

/**
 * Starts the session of Novu's current inbox (docs/engine.md, "The inbox"): the profile fields it
 * sends (its timezone among them) change the subscriber only with a valid `subscriberHash`, and so
 * does `defaultSchedule`, which a subscriber with a schedule of its own keeps out; a subscriber the
 * session makes takes it regardless. The answer carries the unread counts the bell starts from.
 */
export async function startInboxSession(deps: Deps, tools: SessionTools, input: InboxSessionInput) {
  const subscriberId = input.subscriber?.subscriberId ?? input.subscriberId;
  if (subscriberId === undefined) throw invalidField("subscriber.subscriberId", "is required");
  const { subscriberId: _named, timezone, ...rest } = input.subscriber ?? { subscriberId };
  // The client sends the browser's own zone when the page names none: one this runtime does not
  // know (a browser may say `Etc/Unknown`) is left out rather than refusing the inbox.
  const profile =
    timezone === undefined || (timezone !== null && timezone !== "" && !isTimezone(timezone))
      ? rest
      : { ...rest, timezone };
  const start = (d: Deps) =>
    startSession(
      d,
      tools,
      {
        applicationIdentifier: input.applicationIdentifier,
        subscriberId,
        hash: input.subscriberHash,
        profile,
      },
      { hashField: "subscriberHash", profileNeedsHash: true },
    );
  const schedule = input.defaultSchedule;
  const started = schedule
    ? // One transaction: a schedule refused (a 400) leaves no subscriber made for it.
      await inTransaction(deps, async (d) => {
        const session = await start(d);
        if (session.created || session.verified) {
          await applyDefaultSchedule(d, session.tenant, subscriberId, {
            ...schedule,
            isEnabled: schedule.isEnabled ?? true,
          });
        }
        return session;
      })
    : await start(deps);
  return { ...started, unread: await unreadCounts(deps, started.subscriber.id) };
}

export {
  authenticateSession,
  authenticateToken,
  type SessionIdentity,
  type SessionRules,
  type SessionTools,
  type StartSessionInput,
  startSession,
  subscriberHmac,
} from "./session.ts";
export { SessionTokens, type SubscriberSession } from "./session-tokens.ts";

// ---------------------------------------------------------------- Novu's current inbox

// The filters' readers, for any route that takes the client's filters (the session's, or a key's
// routes over a subscriber's notifications): they refuse what the client's matcher would not read.
export {
  MAX_COUNT_FILTERS,
  readCountFilters,
  readDataFilter,
  readFilter,
  readSeverity,
  readTags,
} from "./filters.ts";

/** The subscriber's notifications with their workflows as they are now (one read for all of them). */
async function withWorkflows(deps: Deps, tenant: Tenant, list: Message[]): Promise<InboxNotification[]> {
  const workflows = await workflowSummariesByIds(
    deps,
    tenant,
    list.map((message) => message.workflowId),
  );
  return list.map((message) => ({ message, workflow: workflows.get(message.workflowId) }));
}

/** Whose inbox a query reads: the subscriber (our id) and its environment. */
export type InboxOwner = messages.InboxOwner;

/** The subscriber as the owner of an inbox, whose environment's lists of tags its filters read. */
export const ownerOf = (subscriber: Subscriber): InboxOwner => ({
  environmentId: subscriber.environmentId,
  subscriberRef: subscriber.id,
});

const notificationNotFound = (id: string) =>
  notFound(`Notification ${mention(id, "with this id")} was not found`);

export interface NotificationsQuery {
  filter: NotificationFilter;
  /** 1–100; default 10. */
  limit?: number;
  offset?: number;
  /** The id of the last notification of the previous page. */
  after?: string;
}

/**
 * A page of the subscriber's notifications (docs/engine.md, "The inbox"), newest first: after the
 * notification `after` (a cursor), skipping `offset` more. `hasMore` is read, not counted.
 */
export async function listNotifications(
  deps: Deps,
  tenant: Tenant,
  owner: InboxOwner,
  query: NotificationsQuery,
): Promise<{ notifications: InboxNotification[]; hasMore: boolean }> {
  let after: messages.PageQuery["after"];
  if (query.after !== undefined) {
    const cursor = await messages.findInboxMessage(deps.db, owner.subscriberRef, query.after);
    if (!cursor) throw invalidField("after", "must be the id of one of the subscriber's notifications");
    after = { createdAt: cursor.createdAt, id: cursor.id };
  }
  const page = await messages.inboxPage(deps.db, owner, query.filter, {
    limit: query.limit ?? FEED_PAGE_SIZE,
    offset: query.offset ?? 0,
    ...(after ? { after } : {}),
  });
  return { notifications: await withWorkflows(deps, tenant, page.messages), hasMore: page.hasMore };
}

/** How many of the subscriber's notifications match each filter, in order: one statement for all. */
export async function countNotifications(
  deps: Deps,
  owner: InboxOwner,
  filters: readonly NotificationFilter[],
): Promise<number[]> {
  return messages.countInbox(deps.db, owner, filters);
}

/** One of the subscriber's notifications; 404 when it is not theirs. */
export async function getNotification(
  deps: Deps,
  tenant: Tenant,
  subscriber: Subscriber,
  id: string,
): Promise<InboxNotification> {
  const message = await messages.findInboxMessage(deps.db, subscriber.id, id);
  if (!message) throw notificationNotFound(id);
  const [found] = await withWorkflows(deps, tenant, [message]);
  return found as InboxNotification;
}

/** What each mark changes, as Novu's inbox changes it: archived implies read, read implies seen. */
const MARKS: Record<NotificationMark, messages.FlagChanges> = {
  read: { seen: true, read: true },
  unread: { seen: true, read: false, archived: false },
  archive: { seen: true, read: true, archived: true },
  unarchive: { seen: true, read: true, archived: false },
};

/** Marks one of the subscriber's notifications; 404 when it is not theirs. */
export async function markNotification(
  deps: Deps,
  tenant: Tenant,
  subscriber: Subscriber,
  id: string,
  mark: NotificationMark,
): Promise<InboxNotification> {
  const current = await messages.findInboxMessage(deps.db, subscriber.id, id);
  if (!current) throw notificationNotFound(id);
  // A mark that changes nothing writes nothing (the moments stay when they were).
  const changes = MARKS[mark];
  const unchanged =
    current.seen === changes.seen &&
    current.read === changes.read &&
    (changes.archived === undefined || current.archived === changes.archived);
  const message = unchanged
    ? current
    : await messages.setInboxFlags(deps.db, subscriber.id, id, changes, isoNow(deps.clock));
  if (!message) throw notificationNotFound(id);
  const [found] = await withWorkflows(deps, tenant, [message]);
  return found as InboxNotification;
}

/** Completes (`done`) or reverts (`pending`) the notification's primary or secondary action. */
export async function setNotificationAction(
  deps: Deps,
  tenant: Tenant,
  subscriber: Subscriber,
  id: string,
  actionType: ActionType,
  status: "done" | "pending",
): Promise<InboxNotification> {
  const current = await messages.findInboxMessage(deps.db, subscriber.id, id);
  if (!current) throw notificationNotFound(id);
  const action = current.cta.action ?? {};
  const cta = {
    ...current.cta,
    action: { ...action, status, result: { ...action.result, type: actionType } },
  };
  const message = await messages.setInboxCta(deps.db, subscriber.id, id, cta, isoNow(deps.clock));
  if (!message) throw notificationNotFound(id);
  const [found] = await withWorkflows(deps, tenant, [message]);
  return found as InboxNotification;
}

/** Deletes one of the subscriber's notifications; 404 when it is not theirs. */
export async function deleteNotification(deps: Deps, subscriber: Subscriber, id: string): Promise<void> {
  const deleted = await messages.deleteInboxWhere(deps.db, ownerOf(subscriber), { filter: {}, ids: [id] });
  if (deleted === 0) throw notificationNotFound(id);
}

/**
 * Marks the subscriber's notifications seen: those among `ids`, or all that match the filter (snoozed
 * ones too); returns how many changed.
 */
export async function markNotificationsSeen(
  deps: Deps,
  subscriber: Subscriber,
  input: { ids?: string[]; filter: NotificationFilter },
): Promise<number> {
  if (input.ids !== undefined && input.ids.length === 0) return 0;
  return messages.setInboxFlagsWhere(
    deps.db,
    ownerOf(subscriber),
    { filter: input.filter, ...(input.ids ? { ids: input.ids } : {}), anySnooze: true, differs: "seen" },
    { seen: true },
    isoNow(deps.clock),
  );
}

/**
 * Reads, archives, archives the read, or deletes every notification of the subscriber that matches
 * the filter (its tags and data): what its inbox shows, so not the snoozed, but a delete takes them
 * too. Returns how many changed.
 */
export async function updateAllNotifications(
  deps: Deps,
  subscriber: Subscriber,
  action: BulkAction,
  filter: NotificationFilter,
): Promise<number> {
  const now = isoNow(deps.clock);
  switch (action) {
    case "read":
      return messages.setInboxFlagsWhere(
        deps.db,
        ownerOf(subscriber),
        { filter, differs: "read" },
        MARKS.read,
        now,
      );
    case "archive":
      return messages.setInboxFlagsWhere(
        deps.db,
        ownerOf(subscriber),
        { filter, differs: "archived" },
        MARKS.archive,
        now,
      );
    case "archive-read":
      return messages.setInboxFlagsWhere(
        deps.db,
        ownerOf(subscriber),
        { filter: { ...filter, read: true }, differs: "archived" },
        MARKS.archive,
        now,
      );
    case "delete":
      return messages.deleteInboxWhere(deps.db, ownerOf(subscriber), { filter });
  }
}

/** What a snooze's timer needs: the database and clock, and the queue that holds the timer. */
export interface InboxTimerDeps extends Deps {
  readonly queue: JobQueue;
}

/** The queue's task that ends a snooze. */
export const INBOX_TASKS = { wakeSnoozed: "inbox.wake-snoozed" } as const;

const HOUR_MS = 3_600_000;

function wakeTask(messageId: string, until: string): NewTask {
  return {
    task: INBOX_TASKS.wakeSnoozed,
    payload: { messageId, until },
    runAt: Date.parse(until),
    key: `inbox:wake:${messageId}:${until}`,
  };
}

/**
 * Adds the task that ends a snooze, in the caller's transaction. A queue that keeps real time
 * (graphile-worker under a test's ManualClock) would run it only when as much real time has passed:
 * the business clock's timer then adds it again, due now, once that clock reaches the moment; the
 * task that comes second finds the message awake and does nothing.
 */
async function armWake(deps: InboxTimerDeps, db: Deps["db"], task: NewTask): Promise<() => void> {
  await deps.queue.add(db, [task]);
  return () => {
    deps.queue.wake();
    if (deps.queue.runAtFollowsClock || task.runAt === undefined) return;
    deps.clock.at(task.runAt, () => {
      const { runAt: _runAt, ...now } = task;
      // Returned: a ManualClock keeps the promise, so that a test can wait for the task to be added.
      return deps.queue
        .add(deps.db, [{ ...now, key: `${task.key}:by-clock` }])
        .then(() => deps.queue.wake())
        .catch(() => {
          // The real-time task still runs it; a closed queue at shutdown lands here.
        });
    });
  };
}

/**
 * Snoozes one of the subscriber's notifications until `snoozeUntil` (docs/engine.md, "The inbox"):
 * hidden from its feed and counts until then, when a durable timer (a queue task, as a delay's)
 * brings it back unread. Refused (400) in the past, or further ahead than `maxHours` (0: snoozing is
 * off). Snoozing again moves the moment; the earlier timer then finds nothing to do.
 */
export async function snoozeNotification(
  deps: InboxTimerDeps,
  tenant: Tenant,
  subscriber: Subscriber,
  id: string,
  snoozeUntil: string,
  maxHours: number,
): Promise<InboxNotification> {
  if (maxHours <= 0) throw badRequest("Snoozing is off (INBOX_MAX_SNOOZE_DURATION_HOURS is 0)");
  const until = Date.parse(snoozeUntil);
  const now = deps.clock.now();
  if (Number.isNaN(until)) throw invalidField("snoozeUntil", "must be an ISO 8601 date-time");
  if (until <= now) throw invalidField("snoozeUntil", "must be in the future");
  if (until - now > maxHours * HOUR_MS)
    throw invalidField("snoozeUntil", `must be at most ${maxHours} hours from now`);
  const untilIso = new Date(until).toISOString();
  const { message, armed } = await inTransaction(deps, async (trx) => {
    const snoozed = await messages.setSnooze(
      trx.db,
      subscriber.id,
      id,
      untilIso,
      new Date(now).toISOString(),
    );
    if (!snoozed) throw notificationNotFound(id);
    return { message: snoozed, armed: await armWake(deps, trx.db, wakeTask(snoozed.id, untilIso)) };
  });
  armed();
  const [found] = await withWorkflows(deps, tenant, [message]);
  return found as InboxNotification;
}

/**
 * Ends a notification's snooze now: back in the feed, delivered again (its read state as it was).
 * A notification that is not snoozed is answered as it is.
 */
export async function unsnoozeNotification(
  deps: Deps,
  tenant: Tenant,
  subscriber: Subscriber,
  id: string,
): Promise<InboxNotification> {
  const current = await messages.findInboxMessage(deps.db, subscriber.id, id);
  if (!current) throw notificationNotFound(id);
  let message = current;
  if (current.snoozedUntil !== null) {
    const now = isoNow(deps.clock);
    const woken = await messages.setSnooze(deps.db, subscriber.id, id, null, now, [
      ...current.deliveredAt,
      now,
    ]);
    if (!woken) throw notificationNotFound(id);
    message = woken;
  }
  const [found] = await withWorkflows(deps, tenant, [message]);
  return found as InboxNotification;
}

/** Told of a snoozed notification that came back (its message, for the sockets). */
export type WakeListener = (change: InboxChange & { messageId: string }) => void;

/**
 * The worker's tasks of the inbox: ending a snooze when its moment comes (run at least once: a
 * repeat, or a timer whose snooze was moved or ended, finds nothing to do).
 */
export function inboxTasks(deps: InboxTimerDeps, onWake?: WakeListener): Record<string, TaskHandler> {
  return {
    [INBOX_TASKS.wakeSnoozed]: async (payload) => {
      const messageId = String(payload.messageId ?? "");
      const until = String(payload.until ?? "");
      const due = Date.parse(until);
      if (messageId === "" || Number.isNaN(due)) return;
      const now = deps.clock.now();
      if (due > now) {
        // Early by this process's clock (another process's clock ran ahead): wait again.
        const task = { ...wakeTask(messageId, until), key: `inbox:wake:${messageId}:${until}:at:${now}` };
        (await armWake(deps, deps.db, task))();
        return;
      }
      const woken = await messages.wakeSnoozed(deps.db, messageId, until, new Date(now).toISOString());
      if (woken) {
        onWake?.({
          environmentId: woken.environmentId,
          subscriberRef: woken.subscriberRef,
          messageId: woken.id,
        });
      }
    },
  };
}
