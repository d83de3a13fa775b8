import { type Kysely, type Selectable, sql } from "kysely";
import {
  type ExecutionDetail,
  type ExecutionStatus,
  notificationFromRow,
  triggersOfTransactions,
} from "../engine/domain.ts";
import { runPrepared, slot } from "../store/prepared.ts";
import type { Database, NotificationsTable } from "../store/schema.ts";
import { dialectOf, newestFirstPage, readBool, readJson, readTimestamp } from "../store/values.ts";
import { type NotificationStatus, statusCondition } from "./status.ts";

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
  /** Notifications in any of these statuses (status.ts), as their jobs make them. */
  statuses?: NotificationStatus[];
}

/** The environment's notifications matching `filter`, unordered (listNotifications pages them). */
export function notificationsMatching(db: Db, environmentId: string, filter: NotificationFilter) {
  // A transaction's notifications are found through its trigger (engine/domain.ts).
  let base =
    filter.transactionId === undefined
      ? db.selectFrom("notifications").where("environment_id", "=", environmentId)
      : db
          .selectFrom("notifications")
          .where("trigger_id", "in", triggersOfTransactions(db, environmentId, [filter.transactionId]))
          .where("transaction_id", "=", filter.transactionId);
  if (filter.workflowIds?.length) base = base.where("workflow_id", "in", filter.workflowIds);
  if (filter.subscriberRefs?.length) base = base.where("subscriber_ref", "in", filter.subscriberRefs);
  if (filter.channels?.length) {
    const channels = filter.channels;
    base = base.where((eb) =>
      eb.or(channels.map((channel) => eb("channels", "like", `%${JSON.stringify(channel)}%`))),
    );
  }
  if (filter.statuses?.length) {
    const statuses = filter.statuses;
    base = base.where((eb) => {
      const jobsIn = (list: string[]) =>
        eb.exists(
          eb
            .selectFrom("jobs")
            .select(sql.lit(1).as("one"))
            .whereRef("jobs.notification_id", "=", "notifications.id")
            .where("jobs.status", "in", list),
        );
      return eb.or(
        statuses.map((status) => {
          const { some, none } = statusCondition(status);
          return eb.and([...(some ? [jobsIn(some)] : []), ...(none.length ? [eb.not(jobsIn(none))] : [])]);
        }),
      );
    });
  }
  return base;
}

/** A page of the environment's notifications, newest first, and how many match in all. */
export async function listNotifications(
  db: Db,
  environmentId: string,
  filter: NotificationFilter,
  page: { offset: number; limit: number },
) {
  const { rows, total } = await newestFirstPage(notificationsMatching(db, environmentId, filter), page);
  return { totalCount: total, notifications: rows.map(notificationFromRow) };
}

// ---------------------------------------------------------------- stats

/**
 * The environment's notifications since `since`: a range of an index that leads with environment_id
 * and holds created_at, never a scan of the table (test/activity-stats.test.ts checks the plans).
 * SQLite: `SEARCH notifications USING COVERING INDEX notifications_newest (environment_id=? AND
 * created_at>?)` for the counts, `USING INDEX` (then a temp b-tree for the GROUP BY) for the days.
 * PostgreSQL: an Index (Only) Scan with `Index Cond: environment_id = $1 AND created_at >= $2`.
 */
export function notificationsSince(db: Db, environmentId: string, since: string) {
  return db
    .selectFrom("notifications")
    .where("environment_id", "=", environmentId)
    .where("created_at", ">=", since);
}

/** How many notifications the environment has had since `monthStart`, and since `weekStart` (later). */
export function sentCountsQuery(db: Db, environmentId: string, monthStart: string, weekStart: string) {
  return notificationsSince(db, environmentId, monthStart).select((eb) => [
    eb.fn.countAll<number | string | bigint>().as("monthly"),
    eb.fn
      .sum<number | string | bigint | null>(
        eb.case().when("created_at", ">=", weekStart).then(1).else(0).end(),
      )
      .as("weekly"),
  ]);
}

export async function sentCounts(db: Db, environmentId: string, monthStart: string, weekStart: string) {
  const row = await sentCountsQuery(db, environmentId, monthStart, weekStart).executeTakeFirst();
  return { monthly: Number(row?.monthly ?? 0), weekly: Number(row?.weekly ?? 0) };
}

/** The UTC calendar day (YYYY-MM-DD) of a notification's created_at, as each backend spells it. */
const dayOf = (db: Db) =>
  dialectOf(db) === "sqlite"
    ? sql<string>`substr(created_at, 1, 10)`
    : sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;

/**
 * The environment's notifications since `since`, counted per UTC day, workflow and channel list:
 * a handful of rows per day whatever the volume, which the service folds into one per day.
 */
export function dailyCountsQuery(db: Db, environmentId: string, since: string) {
  const day = dayOf(db);
  return notificationsSince(db, environmentId, since)
    .select((eb) => [
      day.as("day"),
      "workflow_id",
      "channels",
      eb.fn.countAll<number | string | bigint>().as("total"),
    ])
    .groupBy([day, "workflow_id", "channels"]);
}

export async function dailyCounts(db: Db, environmentId: string, since: string) {
  const rows = await dailyCountsQuery(db, environmentId, since).execute();
  return rows.map((row) => ({
    day: row.day,
    workflowId: row.workflow_id,
    channels: readJson<string[]>(row.channels),
    total: Number(row.total),
  }));
}

// ---------------------------------------------------------------- execution details

/** An execution detail as the activity shows it: with its job's step type, Novu's `channel`. */
export type DetailView = ExecutionDetail & { channel: string };

function toDetail(row: Selectable<Database["execution_details"]> & { channel: string | null }): DetailView {
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
    channel: row.channel ?? "",
  };
}

export async function listDetails(
  db: Db,
  environmentId: string,
  filter: { notificationIds?: string[]; subscriberRef?: string },
): Promise<DetailView[]> {
  let query = db
    .selectFrom("execution_details as d")
    .leftJoin("jobs as j", "j.id", "d.job_id")
    .selectAll("d")
    .select("j.type as channel")
    .where("d.environment_id", "=", environmentId);
  if (filter.notificationIds) {
    if (filter.notificationIds.length === 0) return [];
    query = query.where("d.notification_id", "in", filter.notificationIds);
  }
  if (filter.subscriberRef !== undefined) query = query.where("d.subscriber_ref", "=", filter.subscriberRef);
  const rows = await query.orderBy("d.created_at").orderBy("d.id").limit(10_000).execute();
  return rows.map(toDetail);
}
