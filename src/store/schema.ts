import type { ColumnType, Generated } from "kysely";

/**
 * The tables as Kysely sees them. Booleans and timestamps read back differently on the two backends
 * (SQLite: 0/1 and ISO text; PostgreSQL: boolean and Date), so their
 * select types admit both and the row mappers in each feature normalise them (see ./values.ts).
 */
export type Bool = ColumnType<boolean | number, boolean, boolean>;
export type Timestamp = ColumnType<string | Date, string, string>;
export type NullableTimestamp = ColumnType<string | Date | null, string | null, string | null>;
/** JSON text on both backends. */
export type Json = ColumnType<string, string, string>;

export interface OrganizationsTable {
  id: string;
  name: string;
  /** Migration 0023: the branding (logo, colours, font, content background), JSON. */
  branding: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EnvironmentsTable {
  id: string;
  organization_id: string;
  name: string;
  parent_id: string;
  /** The public application id (migration 0003): random, unique; what the inbox widget names. */
  identifier: ColumnType<string, string | undefined, string>;
  /** Whether subscriber sessions must carry an HMAC of the subscriberId (migration 0003). */
  hmac: ColumnType<boolean | number, boolean | undefined, boolean>;
  /** The URL of the environment's code-first workflow app (its bridge); "" when none (migration 0020). */
  bridge_url: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  environment_id: string;
  key_hash: string;
  /** The key's last characters, so a listing can tell keys apart (migration 0003); "" for older keys. */
  key_hint: ColumnType<string, string | undefined, string>;
  /** The key sealed with the secret key, for the widget's HMAC (migration 0009); null when unknown. */
  key_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface NotificationGroupsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  name: string;
  /** The name trimmed and lower-cased: what uniqueness is decided on. */
  name_key: string;
  parent_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WorkflowsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  name: string;
  description: string;
  identifier: string;
  active: Bool;
  draft: Bool;
  critical: Bool;
  tags: Json;
  steps: Json;
  triggers: Json;
  preference_settings: Json;
  data: Json;
  workflow_integration_status: Json;
  /** Migration 0011: high, medium, low or none; what the inbox shows and filters by. */
  severity: ColumnType<string, string | undefined, string>;
  /** Migration 0020: "" for a workflow stored here, "external" for one defined in code and synced from its bridge. */
  origin: ColumnType<string, string | undefined, string>;
  /** Migration 0020: the JSON Schema a trigger's payload must match, as JSON; "" for none. */
  payload_schema: ColumnType<string, string | undefined, string>;
  /** Migration 0020: a code workflow's definition as its bridge answered at the last sync, as JSON; "". */
  code_definition: ColumnType<string, string | undefined, string>;
  notification_group_id: string;
  parent_id: string;
  creator_id: string;
  deleted: Bool;
  deleted_at: NullableTimestamp;
  deleted_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IdempotencyKeysTable {
  environment_id: string;
  key: string;
  request_hash: string;
  /** 0 while the first request is still running. */
  status_code: number;
  /** The response as sent; while status_code is 0, the claim token of the request that runs. */
  response_body: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/**
 * SQLite only (migration 0002): the live workflows' names and identifiers, under an INTEGER PRIMARY
 * KEY that the FTS5 trigram index `workflow_search_fts` points at. Kept in step by triggers.
 */
export interface WorkflowSearchTable {
  doc_id: number;
  workflow_id: string;
  environment_id: string;
  name: string;
  identifier: string;
}

/** Migration 0003: one row per environment × subscriberId. Unset profile fields are "". */
export interface SubscribersTable {
  id: string;
  organization_id: string;
  environment_id: string;
  subscriber_id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  avatar: string;
  locale: string;
  data: Json;
  channels: Json;
  is_online: Bool;
  last_online_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Migration 0012: an IANA zone name, "" when unknown (the weekly schedule is then read in UTC). */
  timezone: ColumnType<string, string | undefined, string>;
}

/** A subscriber's global preference (workflow_id "") or its preference for one workflow. */
export interface SubscriberPreferencesTable {
  id: string;
  organization_id: string;
  environment_id: string;
  /** subscribers.id */
  subscriber_ref: string;
  level: "global" | "template";
  workflow_id: string;
  enabled: Bool;
  /** JSON: only the channels the subscriber set. */
  channels: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Migration 0012: JSON {isEnabled, weeklySchedule?} on the global row; "" when none was set. */
  schedule: ColumnType<string, string | undefined, string>;
}

export interface TopicsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  key: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Migration 0016: the topic's own data, JSON text. */
  data: ColumnType<string, string | undefined, string>;
}

/** Topic membership; the primary key (topic_id, subscriber_ref) is the fan-out's keyset. */
export interface TopicSubscribersTable {
  topic_id: string;
  /** subscribers.id */
  subscriber_ref: string;
  environment_id: string;
  subscriber_id: string;
  created_at: Timestamp;
  /** Migration 0012: the subscription's id, identifier (unique in its topic) and name. */
  id: ColumnType<string, string | undefined, string>;
  identifier: ColumnType<string, string | undefined, string>;
  name: ColumnType<string, string | undefined, string>;
  /** Migration 0016: when its name or preferences last changed; NULL until then. */
  updated_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
}

/** Migration 0012: a topic subscription's preference for one workflow. */
export interface TopicSubscriptionPreferencesTable {
  topic_id: string;
  subscriber_ref: string;
  workflow_id: string;
  environment_id: string;
  enabled: Bool;
  /** JSON: only the channels set. */
  channels: Json;
  /** JSON Logic on `{payload}`; "" when none. */
  condition: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * SQLite only (migration 0004): the embedded job queue (src/engine/queue/sqlite-queue.ts). Times are
 * epoch milliseconds of the service's clock. On PostgreSQL the queue is graphile-worker's schema.
 */
export interface QueueTasksTable {
  id: Generated<number>;
  task: string;
  /** JSON text. */
  payload: string;
  run_at: number;
  key: string | null;
  /** Runs started, counted when claimed (so a run cut short by a crash counts). */
  attempts: Generated<number>;
  max_attempts: number;
  last_error: string | null;
  /** Set while a worker runs the task; cleared when it is rescheduled, and at the worker's start. */
  claimed_at: number | null;
  created_at: number;
}

/**
 * PostgreSQL only (migration 0006): graphile-worker's live workers, by their heartbeat
 * (src/engine/queue/graphile-queue.ts).
 */
export interface QueueWorkersTable {
  /** graphile-worker's worker id: what its jobs' locked_by says. */
  worker_id: string;
  /** The process that runs it (host:pid), for the logs. */
  owner: string;
  /** The database's now() at the last heartbeat. */
  heartbeat_at: ColumnType<Date, string | undefined, string>;
}

/** An acknowledged trigger (migration 0005): one per environment and transactionId. */
export interface TriggersTable {
  id: string;
  organization_id: string;
  environment_id: string;
  transaction_id: string;
  workflow_id: string;
  status: string;
  request: Json;
  fanout_cursor: string;
  fanout_done: Bool;
  created_at: Timestamp;
}

export interface NotificationsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  trigger_id: string;
  transaction_id: string;
  workflow_id: string;
  workflow: Json;
  subscriber_ref: string;
  payload: Json;
  overrides: Json;
  actor: Json;
  tenant: Json;
  to: Json;
  channels: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Migration 0012: the topic the notification was fanned out from; "" when addressed directly. */
  topic_id: ColumnType<string, string | undefined, string>;
}

export interface JobsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  notification_id: string;
  transaction_id: string;
  workflow_id: string;
  subscriber_ref: string;
  step_index: number;
  step: Json;
  type: string;
  status: string;
  run_at: NullableTimestamp;
  attempts: number;
  digest: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MessagesTable {
  id: string;
  organization_id: string;
  environment_id: string;
  notification_id: string;
  job_id: string;
  workflow_id: string;
  template_identifier: string;
  subscriber_ref: string;
  subscriber_id: string;
  transaction_id: string;
  channel: string;
  content: string;
  subject: string;
  cta: Json;
  payload: Json;
  provider_id: string;
  provider_message_id: string;
  status: string;
  seen: Bool;
  read: Bool;
  last_seen_at: NullableTimestamp;
  last_read_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Migration 0011 (the inbox): set by archive; an archived message is read. */
  archived: ColumnType<boolean | number, boolean | undefined, boolean>;
  archived_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
  /** Hidden from the feed until then; its timer (a queue task) brings it back unread. */
  snoozed_until: ColumnType<string | Date | null, string | null | undefined, string | null>;
  first_seen_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
  /** JSON array of ISO moments: written, and each time a snooze ended. */
  delivered_at: ColumnType<string, string | undefined, string>;
  /** JSON array: the workflow's tags when the message was written. */
  tags: ColumnType<string, string | undefined, string>;
  /** The workflow's severity when the message was written: high, medium, low or none. */
  severity: ColumnType<string, string | undefined, string>;
  /** JSON object: the in-app step's `data`, rendered. */
  data: ColumnType<string, string | undefined, string>;
  avatar: ColumnType<string, string | undefined, string>;
  /** Migration 0017: the id of its tags in message_tag_sets ('' for none), in `messages_inbox`. */
  tag_set: ColumnType<string, string | undefined, string>;
  /** Migration 0025: the feed its in-app step named (Novu's `_feedId`); '' for none. */
  feed_id: ColumnType<string, string | undefined, string>;
}

/** Migration 0017: each list of tags an environment's messages carry, once (see tagSetId). */
export interface MessageTagSetsTable {
  environment_id: string;
  id: string;
  /** The JSON text of the list, as the messages have it. */
  tags: string;
}

export interface ExecutionDetailsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  job_id: string;
  notification_id: string;
  subscriber_ref: string;
  status: string;
  detail: string;
  raw: string;
  is_retry: Bool;
  created_at: Timestamp;
}

/** Migration 0007: an environment's provider configurations; `credentials` is sealed (AES-256-GCM). */
export interface IntegrationsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  provider_id: string;
  channel: string;
  name: string;
  identifier: string;
  credentials: string;
  active: Bool;
  is_primary: Bool;
  conditions: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Migration 0008: digest windows, one row per (workflow, step, subscriber, digest key value, window). */
export interface DigestWindowsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  window_key: string;
  workflow_id: string;
  step_id: string;
  subscriber_ref: string;
  digest_key: string;
  digest_value: string;
  /** `open` until its timer closes it, then `closed`. */
  status: string;
  opened_at: Timestamp;
  closes_at: Timestamp;
  last_event_at: Timestamp;
  event_count: number;
  lead_job_id: string;
  carrier_job_id: string | null;
  total_count: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DigestEventsTable {
  window_id: string;
  seq: number;
  job_id: string;
  notification_id: string;
  created_at: Timestamp;
}

/** The recipients an environment's triggers reached in one minute (migration 0015). */
export interface QuotaRecipientsTable {
  environment_id: string;
  /** Minutes since the epoch, by the app's clock. */
  minute: number;
  recipients: number;
}

/** How many of an environment's jobs are not final, kept by triggers on `jobs` (migration 0015). */
export interface QuotaOpenJobsTable {
  environment_id: string;
  shard: number;
  open: number | string | bigint;
}

/** Migration 0019: an environment's tenants (Novu's), unique by identifier in the environment. */
export interface TenantsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  identifier: string;
  name: string;
  data: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Migration 0020: a run a throttle step let through, counted against its key's window. */
export interface ThrottlePassesTable {
  job_id: string;
  environment_id: string;
  /** A hash of the environment, workflow, step, subscriber and throttle key. */
  throttle_key: string;
  created_at: Timestamp;
}

/** Migration 0021: an environment's email layouts (Novu's), unique by identifier in the environment. */
export interface LayoutsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  parent_id: string;
  creator_id: string;
  identifier: string;
  name: string;
  description: string;
  content: string;
  variables: Json;
  is_default: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Migration 0022: a workflow's overrides for one tenant (Novu's), one per workflow and tenant. */
export interface WorkflowOverridesTable {
  id: string;
  organization_id: string;
  environment_id: string;
  workflow_id: string;
  tenant_id: string;
  active: Bool;
  preference_settings: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Migration 0024: an environment's feeds (Novu's), unique by identifier (the name). */
export interface FeedsTable {
  id: string;
  organization_id: string;
  environment_id: string;
  identifier: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface Database {
  organizations: OrganizationsTable;
  environments: EnvironmentsTable;
  api_keys: ApiKeysTable;
  notification_groups: NotificationGroupsTable;
  workflows: WorkflowsTable;
  idempotency_keys: IdempotencyKeysTable;
  workflow_search: WorkflowSearchTable;
  subscribers: SubscribersTable;
  subscriber_preferences: SubscriberPreferencesTable;
  topics: TopicsTable;
  topic_subscribers: TopicSubscribersTable;
  topic_subscription_preferences: TopicSubscriptionPreferencesTable;
  queue_tasks: QueueTasksTable;
  queue_workers: QueueWorkersTable;
  triggers: TriggersTable;
  notifications: NotificationsTable;
  jobs: JobsTable;
  messages: MessagesTable;
  message_tag_sets: MessageTagSetsTable;
  execution_details: ExecutionDetailsTable;
  integrations: IntegrationsTable;
  digest_windows: DigestWindowsTable;
  digest_events: DigestEventsTable;
  quota_recipients: QuotaRecipientsTable;
  quota_open_jobs: QuotaOpenJobsTable;
  tenants: TenantsTable;
  throttle_passes: ThrottlePassesTable;
  layouts: LayoutsTable;
  workflow_overrides: WorkflowOverridesTable;
  feeds: FeedsTable;
}
