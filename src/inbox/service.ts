import { isoNow } from "../clock.ts";
import type { Deps } from "../deps.ts";
import type { Message } from "../engine/domain.ts";
import { invalidField, mention, notFound } from "../errors.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { findSubscriberRefs, getSubscriber, getSubscriberByRef } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { Channel } from "../workflows/domain.ts";
import * as messages from "./repository.ts";
import { type SessionTools, type StartSessionInput, startSession } from "./session.ts";

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
 * inbox's real-time side (src/widgets, above it) is told of each one after it is committed, and tells
 * the subscriber's sockets; app.ts hands its listener to the inbox routes, and to the engine as its
 * MessageListener.
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
 * What the sockets tell a subscriber after every change: the unseen messages of its feed, and the
 * unread ones its inbox shows (as the widget's one number, and by severity for Novu's current inbox).
 */
export async function inboxCounts(
  deps: Deps,
  subscriberRef: string,
): Promise<{ unseenCount: number; unreadCount: number; counts: UnreadCounts }> {
  const [unseenCount, counts] = await Promise.all([
    messages.countMessages(deps.db, subscriberRef, "in_app", { seen: false }),
    unreadCounts(deps, subscriberRef),
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
}

/**
 * Starts the session of Novu's current inbox (docs/engine.md, "The inbox"): the profile fields it
 * sends change the subscriber only with a valid `subscriberHash` (its timezone is not kept), and
 * the answer carries the unread counts the bell starts from.
 */
export async function startInboxSession(deps: Deps, tools: SessionTools, input: InboxSessionInput) {
  const subscriberId = input.subscriber?.subscriberId ?? input.subscriberId;
  if (subscriberId === undefined) throw invalidField("subscriber.subscriberId", "is required");
  const { subscriberId: _named, timezone: _timezone, ...profile } = input.subscriber ?? { subscriberId };
  const started = await startSession(
    deps,
    tools,
    {
      applicationIdentifier: input.applicationIdentifier,
      subscriberId,
      hash: input.subscriberHash,
      profile,
    },
    { hashField: "subscriberHash", profileNeedsHash: true },
  );
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
