import { newObjectId } from "../ids.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import {
  type ExecutionDetail,
  freshInboxState,
  type Job,
  type Message,
  type Notification,
} from "./domain.ts";

/**
 * The two records every step writes, built in one place: a Message (what a channel step delivered)
 * and an ExecutionDetail (a line of the notification's activity).
 */

/**
 * A new Message of the job's step for its subscriber, as first written: unseen and unread, with the
 * workflow's inbox state; `fields` gives the channel and what the step made of it.
 */
export function newMessage(
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  now: string,
  fields: Pick<Message, "channel"> & Partial<Message>,
): Message {
  return {
    id: newObjectId(),
    organizationId: job.organizationId,
    environmentId: job.environmentId,
    notificationId: job.notificationId,
    jobId: job.id,
    workflowId: job.workflowId,
    templateIdentifier: notification.workflow.identifier,
    subscriberRef: job.subscriberRef,
    subscriberId: subscriber.subscriberId,
    transactionId: job.transactionId,
    content: "",
    subject: "",
    cta: { type: "redirect", data: {} },
    payload: notification.payload,
    providerId: "",
    providerMessageId: "",
    status: "sent",
    seen: false,
    read: false,
    lastSeenDate: null,
    lastReadDate: null,
    ...freshInboxState(notification.workflow, now),
    data: {},
    avatar: "",
    feedId: "",
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

/** A line of a job's activity: its status and what happened, at `now`. */
export function newDetail(
  job: Pick<Job, "id" | "organizationId" | "environmentId" | "notificationId" | "subscriberRef">,
  status: ExecutionDetail["status"],
  detail: string,
  now: string,
  options: { raw?: string; isRetry?: boolean; id?: string } = {},
): ExecutionDetail {
  return {
    id: options.id ?? newObjectId(),
    organizationId: job.organizationId,
    environmentId: job.environmentId,
    jobId: job.id,
    notificationId: job.notificationId,
    subscriberRef: job.subscriberRef,
    status,
    detail,
    raw: options.raw ?? "",
    isRetry: options.isRetry ?? false,
    createdAt: now,
  };
}
