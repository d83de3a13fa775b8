import type { Message } from "../engine/domain.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { presentSubscriber } from "../subscribers/presenter.ts";

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
    lastSeenDate: message.lastSeenDate ?? "",
    lastReadDate: message.lastReadDate ?? "",
    deleted: false,
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
    ...(subscriber ? { subscriber: presentSubscriber(subscriber) } : {}),
  };
}
