import type { Job } from "../engine/domain.ts";
import type { DetailView } from "./repository.ts";
import type { DayStats, NotificationView } from "./service.ts";

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

export function presentJob(job: Job & { executionDetails: DetailView[] }) {
  return {
    _id: job.id,
    _notificationId: job.notificationId,
    _subscriberId: job.subscriberRef,
    _templateId: job.workflowId,
    transactionId: job.transactionId,
    type: job.type,
    status: job.status,
    step: job.step,
    digest: job.digest,
    runAt: job.runAt ?? "",
    attempts: job.attempts,
    executionDetails: job.executionDetails.map(presentExecutionDetail),
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
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
    to: notification.to,
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
    jobs: view.jobs.map(presentJob),
    createdAt: notification.createdAt,
    updatedAt: notification.updatedAt,
  };
}

export function presentActivityDay(day: DayStats) {
  return { _id: day.day, count: day.count, templates: day.workflowIds, channels: day.channels };
}
