import type { ColumnType } from "kysely";

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
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EnvironmentsTable {
  id: string;
  organization_id: string;
  name: string;
  parent_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  environment_id: string;
  key_hash: string;
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

export interface Database {
  organizations: OrganizationsTable;
  environments: EnvironmentsTable;
  api_keys: ApiKeysTable;
  notification_groups: NotificationGroupsTable;
  workflows: WorkflowsTable;
  idempotency_keys: IdempotencyKeysTable;
  workflow_search: WorkflowSearchTable;
}
