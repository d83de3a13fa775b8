import type { Kysely, Selectable } from "kysely";
import type { Database, MessagesTable, NotificationsTable } from "../store/schema.ts";
import { readBool, readJson, readTimestamp } from "../store/values.ts";
import {
  type Channel,
  type PreferenceSettings,
  SEVERITIES,
  type Severity,
  type Step,
  type StepType,
  type Trigger,
} from "../workflows/domain.ts";

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
  | "no_workflow_active_steps_defined"
  | "no_tenant_found";

/** The workflow as it was when triggered: what a notification's run reads, whatever edits follow. */
export interface WorkflowSnapshot {
  id: string;
  name: string;
  identifier: string;
  critical: boolean;
  /** Absent from runs triggered before workflows had a severity (read as none). */
  severity?: Severity;
  /** The workflow's tags, which its in-app messages carry; absent from older runs. */
  tags?: string[];
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

/** One of an in-app message's action buttons, rendered (`cta.action.buttons`, as Novu keeps them). */
export interface MessageButton {
  type: "primary" | "secondary";
  content: string;
  url?: string;
  target?: string;
}

/**
 * Where an in-app message leads (`data.url`, `data.target`), its buttons, and the action the
 * subscriber took: `status` done (or pending again, reverted) on the button `result.type`.
 */
export interface MessageCta {
  type: string;
  data: { url?: string; target?: string };
  action?: {
    buttons?: MessageButton[];
    status?: string;
    result?: { type?: string; payload?: Record<string, unknown> };
    [field: string]: unknown;
  };
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
  /** When it was first seen; null until then (and for messages seen before it was kept). */
  firstSeenDate: string | null;
  /** Archived (the inbox's archive); an archived message is read. */
  archived: boolean;
  archivedAt: string | null;
  /** Hidden from the feed until then, when it comes back unread; null when not snoozed. */
  snoozedUntil: string | null;
  /** When it was delivered: written, and again each time a snooze ended. */
  deliveredAt: string[];
  /** The workflow's tags and severity when the message was written. */
  tags: string[];
  severity: Severity;
  /** The in-app step's `data`, rendered. */
  data: Record<string, unknown>;
  avatar: string;
  /** The feed (its id) the in-app step named when it was written (Novu's `_feedId`); '' for none. */
  feedId: string;
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

/**
 * What the inbox keeps of a message that has just been delivered: nothing seen, archived or snoozed
 * yet, delivered `now`, with the workflow's tags and severity as the run knows them.
 */
export function freshInboxState(workflow: Pick<WorkflowSnapshot, "tags" | "severity">, now: string) {
  return {
    firstSeenDate: null,
    archived: false,
    archivedAt: null,
    snoozedUntil: null,
    deliveredAt: [now],
    tags: workflow.tags ?? [],
    severity: workflow.severity ?? "none",
  } satisfies Partial<Message>;
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
    firstSeenDate: row.first_seen_at === null ? null : readTimestamp(row.first_seen_at),
    archived: readBool(row.archived),
    archivedAt: row.archived_at === null ? null : readTimestamp(row.archived_at),
    snoozedUntil: row.snoozed_until === null ? null : readTimestamp(row.snoozed_until),
    deliveredAt: readJson<string[]>(row.delivered_at),
    tags: readJson<string[]>(row.tags),
    severity: (SEVERITIES as readonly string[]).includes(row.severity) ? (row.severity as Severity) : "none",
    data: readJson<Record<string, unknown>>(row.data),
    avatar: row.avatar,
    feedId: row.feed_id,
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

// ---------------------------------------------------------------- a transaction's rows

/**
 * How a transaction's rows are found. Only `triggers` indexes `transaction_id` (it must: a repeated
 * transactionId is refused by that unique index); the rows made from a trigger are reached through
 * it: its notifications by `trigger_id`, their jobs and messages by `notification_id`, all indexes
 * whose keys grow with time and so append. An index on `transaction_id` in each of those tables
 * put each row's entry at a random place (transactionIds are the client's, often UUIDs), and every
 * such page was written to the log whole on every commit.
 *
 * A row made from a trigger has the trigger's environment and transactionId; the subqueries scope by
 * the environment, so a caller that filters on them needs no `environment_id` of its own (and on
 * SQLite must not add one: the planner would then walk the environment's whole time index).
 */

/** Ids of the environment's triggers with any of these transactionIds. */
export function triggersOfTransactions(
  db: Kysely<Database>,
  environmentId: string,
  transactionIds: readonly string[],
) {
  return db
    .selectFrom("triggers")
    .select("triggers.id")
    .where("triggers.environment_id", "=", environmentId)
    .where("triggers.transaction_id", "in", [...transactionIds]);
}

/** Ids of the notifications of the environment's triggers with any of these transactionIds. */
export function notificationsOfTransactions(
  db: Kysely<Database>,
  environmentId: string,
  transactionIds: readonly string[],
) {
  return db
    .selectFrom("notifications")
    .select("notifications.id")
    .where("notifications.trigger_id", "in", triggersOfTransactions(db, environmentId, transactionIds));
}
