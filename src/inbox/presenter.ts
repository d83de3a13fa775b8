import type { Message } from "../engine/domain.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { presentSubscriber } from "../subscribers/presenter.ts";
import type { ActionType, InboxNotification } from "./domain.ts";

/** A message as Novu's API shows it (docs/engine.md, "Records"). */
export function presentMessage(message: Message, subscriber?: Subscriber) {
  return {
    _id: message.id,
    _environmentId: message.environmentId,
    _organizationId: message.organizationId,
    _notificationId: message.notificationId,
    _jobId: message.jobId,
    _templateId: message.workflowId,
    _subscriberId: message.subscriberRef,
    _messageTemplateId: message.workflowId,
    _feedId: message.feedId === "" ? null : message.feedId,
    subscriberId: message.subscriberId,
    templateIdentifier: message.templateIdentifier,
    transactionId: message.transactionId,
    channel: message.channel,
    content: message.content,
    subject: message.subject,
    cta: {
      type: message.cta.type,
      data: message.cta.data,
      ...(message.cta.action ? { action: message.cta.action } : {}),
    },
    payload: message.payload,
    providerId: message.providerId,
    identifier: message.providerMessageId,
    status: message.status,
    seen: message.seen,
    read: message.read,
    archived: message.archived,
    lastSeenDate: message.lastSeenDate ?? "",
    lastReadDate: message.lastReadDate ?? "",
    deleted: false,
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
    ...(subscriber ? { subscriber: presentSubscriber(subscriber) } : {}),
  };
}

// ---------------------------------------------------------------- Novu's current inbox

const TARGETS = new Set(["_self", "_blank", "_parent", "_top", "_unfencedTop"]);

/** A link as the inbox opens it; the target only when it is one a browser knows. */
function redirectOf(url: string | undefined, target: string | undefined) {
  if (url === undefined || url === "") return undefined;
  return { url, ...(target !== undefined && TARGETS.has(target) ? { target } : {}) };
}

function actionOf(message: Message, type: ActionType) {
  const button = message.cta.action?.buttons?.find((b) => b.type === type);
  if (!button) return undefined;
  const action = message.cta.action;
  const redirect = redirectOf(button.url, button.target);
  return {
    label: button.content,
    isCompleted: action?.result?.type === type && action.status === "done",
    ...(redirect ? { redirect } : {}),
  };
}

/** The workflow as the inbox shows it (undefined once it is purged). */
function workflowOf(notification: InboxNotification) {
  const { message, workflow } = notification;
  if (!workflow) return undefined;
  return {
    id: workflow.id,
    identifier: workflow.identifier || message.templateIdentifier,
    name: workflow.name,
    critical: workflow.critical,
    tags: workflow.tags,
    severity: workflow.severity,
  };
}

/**
 * A notification as Novu's current inbox reads it (docs/engine.md, "The inbox"): the message's
 * flags and moments, its buttons as primary and secondary actions (completed when that action is
 * done), where it leads, and its workflow. Absent values are left out, as the client expects.
 */
export function presentInboxNotification(notification: InboxNotification, subscriber: Subscriber) {
  const { message } = notification;
  const primaryAction = actionOf(message, "primary");
  const secondaryAction = actionOf(message, "secondary");
  const redirect = redirectOf(message.cta.data.url, message.cta.data.target);
  const workflow = workflowOf(notification);
  const firstSeenAt = message.firstSeenDate ?? (message.seen ? message.lastSeenDate : null);
  return {
    id: message.id,
    transactionId: message.transactionId,
    ...(message.subject !== "" ? { subject: message.subject } : {}),
    body: message.content,
    to: {
      id: subscriber.id,
      subscriberId: subscriber.subscriberId,
      ...(subscriber.firstName !== "" ? { firstName: subscriber.firstName } : {}),
      ...(subscriber.lastName !== "" ? { lastName: subscriber.lastName } : {}),
      ...(subscriber.avatar !== "" ? { avatar: subscriber.avatar } : {}),
    },
    isRead: message.read,
    isSeen: message.seen,
    isArchived: message.archived,
    isSnoozed: message.snoozedUntil !== null,
    ...(message.snoozedUntil !== null ? { snoozedUntil: message.snoozedUntil } : {}),
    deliveredAt: message.deliveredAt.length > 0 ? message.deliveredAt : [message.createdAt],
    createdAt: message.createdAt,
    ...(message.read && message.lastReadDate !== null ? { readAt: message.lastReadDate } : {}),
    ...(firstSeenAt !== null ? { firstSeenAt } : {}),
    ...(message.archived && message.archivedAt !== null ? { archivedAt: message.archivedAt } : {}),
    ...(message.avatar !== "" ? { avatar: message.avatar } : {}),
    ...(primaryAction ? { primaryAction } : {}),
    ...(secondaryAction ? { secondaryAction } : {}),
    channelType: "in_app" as const,
    tags: message.tags,
    data: message.data,
    ...(redirect ? { redirect } : {}),
    ...(workflow ? { workflow } : {}),
    severity: message.severity,
  };
}

/**
 * The message document the sockets send with `notification_received`, as Novu's own socket sends
 * it: the widget's shape (src/widgets reads it so) and what Novu's current inbox reads of it
 * (archived, snoozedUntil, deliveredAt, firstSeenDate, archivedAt, avatar, tags, data, workflow,
 * severity). `cta` is always there: the client reads `cta.action` and `cta.data` without a check.
 */
export function presentMessageDocument(
  notification: InboxNotification,
  subscriber: ReturnType<typeof presentSubscriber> | Record<string, unknown>,
) {
  const { message } = notification;
  const base = presentMessage(message);
  const workflow = workflowOf(notification);
  return {
    ...base,
    subscriber,
    archived: message.archived,
    archivedAt: message.archivedAt,
    snoozedUntil: message.snoozedUntil,
    deliveredAt: message.deliveredAt.length > 0 ? message.deliveredAt : [message.createdAt],
    firstSeenDate: message.firstSeenDate ?? (message.seen ? message.lastSeenDate : null),
    avatar: message.avatar,
    tags: message.tags,
    data: message.data,
    severity: message.severity,
    ...(workflow ? { workflow } : {}),
  };
}
