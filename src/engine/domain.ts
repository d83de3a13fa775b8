import type { Selectable } from "kysely";
import type { MessagesTable, NotificationsTable } from "../store/schema.ts";
import { readBool, readJson, readTimestamp } from "../store/values.ts";
import type { Channel, PreferenceSettings, Step, StepType, Trigger } from "../workflows/domain.ts";

/**
 * What running a workflow produces (docs/engine.md, "Records"): a notification per trigger and subscriber,
 * a job per notification and step, the messages jobs deliver, and the execution details that say
 * what happened to each job.
 */

export const JOB_STATUSES = [
  "pending",
  "queued",
  "running",
  "completed",
  "failed",
  "delayed",
  "canceled",
  "merged",
  "skipped",
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A job in one of these has run, or never will: nothing changes it any more. */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = [
  "completed",
  "failed",
  "canceled",
  "merged",
  "skipped",
];
/** A job in one of these has not run yet: a cancel still stops it. */
export const WAITING_JOB_STATUSES: readonly JobStatus[] = ["pending", "queued", "delayed"];

export type ExecutionStatus = "Pending" | "Success" | "Failed" | "Queued" | "Warning";

/** The trigger's answer (docs/engine.md, "Triggering and the acknowledgement"). */
export type TriggerStatus =
  | "processed"
  | "trigger_not_active"
  | "no_workflow_steps_defined"
  | "no_workflow_active_steps_defined";

/** The workflow as it was when triggered: what a notification's run reads, whatever edits follow. */
export interface WorkflowSnapshot {
  id: string;
  name: string;
  identifier: string;
  critical: boolean;
  preferenceSettings: PreferenceSettings;
  triggers: Trigger[];
}

export interface Notification {
  id: string;
  organizationId: string;
  environmentId: string;
  triggerId: string;
  transactionId: string;
  workflowId: string;
  workflow: WorkflowSnapshot;
  /** The subscriber's _id. */
  subscriberRef: string;
  payload: Record<string, unknown>;
  overrides: Record<string, unknown>;
  actor: Record<string, unknown>;
  tenant: Record<string, unknown>;
  to: unknown;
  channels: StepType[];
  /**
   * The topic the subscriber was reached through, "" when it was addressed directly: its
   * subscription's preference for the workflow bears on every step.
   */
  topicId: string;
  createdAt: string;
  updatedAt: string;
}

export interface Job {
  id: string;
  organizationId: string;
  environmentId: string;
  notificationId: string;
  transactionId: string;
  workflowId: string;
  subscriberRef: string;
  stepIndex: number;
  step: Step;
  type: StepType;
  status: JobStatus;
  /** ISO 8601, when the job waits for a moment (delay); null otherwise. */
  runAt: string | null;
  attempts: number;
  digest: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface MessageCta {
  type: string;
  data: { url?: string };
  action?: Record<string, unknown>;
}

export interface Message {
  id: string;
  organizationId: string;
  environmentId: string;
  notificationId: string;
  jobId: string;
  workflowId: string;
  templateIdentifier: string;
  subscriberRef: string;
  /** The customer's subscriberId. */
  subscriberId: string;
  transactionId: string;
  channel: Channel;
  content: string;
  subject: string;
  cta: MessageCta;
  payload: Record<string, unknown>;
  providerId: string;
  providerMessageId: string;
  status: string;
  seen: boolean;
  read: boolean;
  lastSeenDate: string | null;
  lastReadDate: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ExecutionDetail {
  id: string;
  organizationId: string;
  environmentId: string;
  jobId: string;
  notificationId: string;
  subscriberRef: string;
  status: ExecutionStatus;
  detail: string;
  raw: string;
  isRetry: boolean;
  createdAt: string;
}

// Rows of what a run writes, read back as domain objects: on the engine's public face, because the
// engine writes them and the features above it read them with their own SQL (the activity views
// notifications, the inbox messages).

export function notificationFromRow(row: Selectable<NotificationsTable>): Notification {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    triggerId: row.trigger_id,
    transactionId: row.transaction_id,
    workflowId: row.workflow_id,
    workflow: readJson<WorkflowSnapshot>(row.workflow),
    subscriberRef: row.subscriber_ref,
    payload: readJson(row.payload),
    overrides: readJson(row.overrides),
    actor: readJson(row.actor),
    tenant: readJson(row.tenant),
    to: readJson(row.to),
    channels: readJson<StepType[]>(row.channels),
    topicId: row.topic_id,
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

export function messageFromRow(row: Selectable<MessagesTable>): Message {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    notificationId: row.notification_id,
    jobId: row.job_id,
    workflowId: row.workflow_id,
    templateIdentifier: row.template_identifier,
    subscriberRef: row.subscriber_ref,
    subscriberId: row.subscriber_id,
    transactionId: row.transaction_id,
    channel: row.channel as Channel,
    content: row.content,
    subject: row.subject,
    cta: readJson<MessageCta>(row.cta),
    payload: readJson(row.payload),
    providerId: row.provider_id,
    providerMessageId: row.provider_message_id,
    status: row.status,
    seen: readBool(row.seen),
    read: readBool(row.read),
    lastSeenDate: row.last_seen_at === null ? null : readTimestamp(row.last_seen_at),
    lastReadDate: row.last_read_at === null ? null : readTimestamp(row.last_read_at),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}
