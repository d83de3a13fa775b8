import type { Job } from "../engine/domain.ts";
import type { DetailView } from "./repository.ts";
import type { DayStats, NotificationView } from "./service.ts";
import { notificationStatus } from "./status.ts";

export function presentExecutionDetail(detail: DetailView) {
  return {
    _id: detail.id,
    _jobId: detail.jobId,
    _notificationId: detail.notificationId,
    _subscriberId: detail.subscriberRef,
    _environmentId: detail.environmentId,
    _organizationId: detail.organizationId,
    channel: detail.channel,
    status: detail.status,
    detail: detail.detail,
    raw: detail.raw,
    isRetry: detail.isRetry,
    isTest: false,
    source: "Internal",
    createdAt: detail.createdAt,
  };
}

/**
 * A digest job's digest as Novu's activity shows it (what @novu/api reads): the step's timing with
 * what the run recorded (its window, and `total_count` once it closed). Other jobs have none.
 */
function digestOf(job: Job) {
  if (job.type !== "digest") return {};
  const metadata = job.step.metadata;
  return {
    digest: {
      type: metadata.type === "backoff" || metadata.type === "timed" ? metadata.type : "regular",
      amount: metadata.amount,
      unit: metadata.unit,
      digestKey: metadata.digestKey,
      backoff: metadata.backoff,
      backoffAmount: metadata.backoffAmount,
      backoffUnit: metadata.backoffUnit,
      ...job.digest,
    },
  };
}

/**
 * The provider a job delivers through, as Novu's activity names it: `nodemailer` for email (the one
 * email provider), `novu` for the rest (in-app is Novu's own; a chat step may reach several
 * providers, each of its messages naming its own).
 */
const providerOf = (job: Job) => (job.type === "email" ? "nodemailer" : "novu");

export function presentJob(job: Job & { executionDetails: DetailView[] }) {
  // The step as the run took it, without the workflow's own `_parentId` (an object, by the seed).
  const { _parentId: _, ...step } = job.step;
  return {
    _id: job.id,
    _notificationId: job.notificationId,
    _subscriberId: job.subscriberRef,
    _templateId: job.workflowId,
    transactionId: job.transactionId,
    type: job.type,
    status: job.status,
    step,
    ...digestOf(job),
    providerId: providerOf(job),
    runAt: job.runAt ?? "",
    attempts: job.attempts,
    executionDetails: job.executionDetails.map(presentExecutionDetail),
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
}

/**
 * Whom the notification went to, as the trigger named them: the entry of `to` naming its subscriber
 * (a subscriberId becomes `{subscriberId}`), or the topic or broadcast it came through.
 */
function recipientOf(view: NotificationView): Record<string, unknown> {
  const subscriberId = view.subscriber?.subscriberId ?? "";
  const entries = [view.notification.to].flat();
  for (const entry of entries) {
    if (entry === subscriberId) return { subscriberId };
    if (
      typeof entry === "object" &&
      entry !== null &&
      (entry as { subscriberId?: unknown }).subscriberId === subscriberId
    )
      return entry as Record<string, unknown>;
  }
  const only = entries.length === 1 ? entries[0] : undefined;
  if (typeof only === "object" && only !== null) return only as Record<string, unknown>;
  return { subscriberId };
}

export function presentNotification(view: NotificationView) {
  const { notification } = view;
  return {
    _id: notification.id,
    _environmentId: notification.environmentId,
    _organizationId: notification.organizationId,
    _templateId: notification.workflowId,
    _subscriberId: notification.subscriberRef,
    transactionId: notification.transactionId,
    payload: notification.payload,
    to: recipientOf(view),
    tenant: notification.tenant,
    channels: notification.channels,
    template: {
      _id: notification.workflow.id,
      name: notification.workflow.name,
      triggers: notification.workflow.triggers,
    },
    subscriber: view.subscriber
      ? {
          _id: view.subscriber.id,
          subscriberId: view.subscriber.subscriberId,
          firstName: view.subscriber.firstName,
          lastName: view.subscriber.lastName,
          email: view.subscriber.email,
          phone: view.subscriber.phone,
        }
      : {
          _id: notification.subscriberRef,
          subscriberId: "",
          firstName: "",
          lastName: "",
          email: "",
          phone: "",
        },
    status: notificationStatus(view.jobs.map((job) => job.status)),
    jobs: view.jobs.map(presentJob),
    createdAt: notification.createdAt,
    updatedAt: notification.updatedAt,
  };
}

export function presentActivityDay(day: DayStats) {
  return { _id: day.day, count: day.count, templates: day.workflowIds, channels: day.channels };
}
