import type { Kysely, Selectable } from "kysely";
import { type ExecutionDetail, type ExecutionStatus, notificationFromRow } from "../engine/domain.ts";
import { runPrepared, slot } from "../store/prepared.ts";
import type { Database, NotificationsTable } from "../store/schema.ts";
import { countRows, readBool, readTimestamp } from "../store/values.ts";

type Db = Kysely<Database>;

// ---------------------------------------------------------------- notifications

/** The environment's notification; undefined when it has none of this id. */
export async function findNotification(db: Db, id: string, environmentId: string) {
  const [row] = await runPrepared<Selectable<NotificationsTable>>(
    db,
    "find notification in environment",
    () =>
      db
        .selectFrom("notifications")
        .selectAll()
        .where("id", "=", slot("id"))
        .where("environment_id", "=", slot("environmentId")),
    { id, environmentId },
  );
  return row ? notificationFromRow(row) : undefined;
}

export interface NotificationFilter {
  workflowIds?: string[];
  subscriberRefs?: string[];
  transactionId?: string;
  channels?: string[];
}

/** A page of the environment's notifications, newest first, and how many match in all. */
export async function listNotifications(
  db: Db,
  environmentId: string,
  filter: NotificationFilter,
  page: { offset: number; limit: number },
) {
  let base = db.selectFrom("notifications").where("environment_id", "=", environmentId);
  if (filter.workflowIds?.length) base = base.where("workflow_id", "in", filter.workflowIds);
  if (filter.subscriberRefs?.length) base = base.where("subscriber_ref", "in", filter.subscriberRefs);
  if (filter.transactionId !== undefined) base = base.where("transaction_id", "=", filter.transactionId);
  if (filter.channels?.length) {
    const channels = filter.channels;
    base = base.where((eb) =>
      eb.or(channels.map((channel) => eb("channels", "like", `%${JSON.stringify(channel)}%`))),
    );
  }
  const [rows, total] = await Promise.all([
    base
      .selectAll()
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    countRows(base),
  ]);
  return { totalCount: total, notifications: rows.map(notificationFromRow) };
}

// ---------------------------------------------------------------- execution details

function toDetail(row: Selectable<Database["execution_details"]>): ExecutionDetail {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    jobId: row.job_id,
    notificationId: row.notification_id,
    subscriberRef: row.subscriber_ref,
    status: row.status as ExecutionStatus,
    detail: row.detail,
    raw: row.raw,
    isRetry: readBool(row.is_retry),
    createdAt: readTimestamp(row.created_at),
  };
}

export async function listDetails(
  db: Db,
  environmentId: string,
  filter: { notificationIds?: string[]; subscriberRef?: string },
) {
  let query = db.selectFrom("execution_details").selectAll().where("environment_id", "=", environmentId);
  if (filter.notificationIds) {
    if (filter.notificationIds.length === 0) return [];
    query = query.where("notification_id", "in", filter.notificationIds);
  }
  if (filter.subscriberRef !== undefined) query = query.where("subscriber_ref", "=", filter.subscriberRef);
  const rows = await query.orderBy("created_at").orderBy("id").limit(10_000).execute();
  return rows.map(toDetail);
}
