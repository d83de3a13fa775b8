import { type Deps, onConnection } from "../deps.ts";
import type { Job, Notification } from "../engine/domain.ts";
import { addUnits, jobsOfNotifications } from "../engine/service.ts";
import { mention, notFound } from "../errors.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import {
  findSubscriberRefs,
  findSubscriberRefsByEmail,
  findSubscriberRefsBySearch,
  getSubscriberByRef,
} from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import * as activity from "./repository.ts";
import type { NotificationStatus } from "./status.ts";

const PAGE_SIZE = 10;

export interface NotificationView {
  notification: Notification;
  subscriber: Subscriber | undefined;
  jobs: (Job & { executionDetails: activity.DetailView[] })[];
}

async function views(deps: Deps, tenant: Tenant, notifications: Notification[]): Promise<NotificationView[]> {
  const ids = notifications.map((n) => n.id);
  // The jobs and their details as of one moment: a job settles with its detail in one commit, and
  // two separate reads could show it settled without the detail that says why (PostgreSQL:
  // one repeatable-read snapshot; SQLite: one transaction, which no other write interleaves).
  const { jobs, details } = await deps.db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => ({
      jobs: await jobsOfNotifications(onConnection(deps, trx), ids),
      details: await activity.listDetails(trx, tenant.environmentId, { notificationIds: ids }),
    }));
  const subscribers = new Map<string, Subscriber | undefined>();
  for (const ref of new Set(notifications.map((n) => n.subscriberRef))) {
    subscribers.set(ref, await getSubscriberByRef(deps, tenant, ref));
  }
  return notifications.map((notification) => ({
    notification,
    subscriber: subscribers.get(notification.subscriberRef),
    jobs: jobs
      .filter((job) => job.notificationId === notification.id)
      .map((job) => ({ ...job, executionDetails: details.filter((d) => d.jobId === job.id) })),
  }));
}

export async function listNotifications(
  deps: Deps,
  tenant: Tenant,
  input: {
    page?: number;
    limit?: number;
    workflowIds?: string[];
    subscriberIds?: string[];
    emails?: string[];
    /** Subscribers whose e-mail contains it (any case) or whose subscriberId it is. */
    search?: string;
    transactionId?: string;
    channels?: string[];
    statuses?: NotificationStatus[];
  },
) {
  const page = input.page ?? 0;
  const limit = input.limit ?? PAGE_SIZE;
  // As Novu: the subscribers named by subscriberId or by e-mail, either.
  let subscriberRefs: string[] | undefined;
  const search = input.search?.trim() ?? "";
  if (input.subscriberIds?.length || input.emails?.length || search !== "") {
    const byId = input.subscriberIds?.length
      ? [...(await findSubscriberRefs(deps, tenant, input.subscriberIds)).values()]
      : [];
    const byEmail = input.emails?.length ? await findSubscriberRefsByEmail(deps, tenant, input.emails) : [];
    const bySearch = search !== "" ? await findSubscriberRefsBySearch(deps, tenant, search) : [];
    subscriberRefs = [...new Set([...byId, ...byEmail, ...bySearch])];
    if (subscriberRefs.length === 0)
      return { page, pageSize: limit, totalCount: 0, hasMore: false, data: [] };
  }
  const { totalCount, notifications } = await activity.listNotifications(
    deps.db,
    tenant.environmentId,
    {
      ...(input.workflowIds?.length ? { workflowIds: input.workflowIds } : {}),
      ...(subscriberRefs ? { subscriberRefs } : {}),
      ...(input.transactionId !== undefined ? { transactionId: input.transactionId } : {}),
      ...(input.channels?.length ? { channels: input.channels } : {}),
      ...(input.statuses?.length ? { statuses: input.statuses } : {}),
    },
    { offset: page * limit, limit },
  );
  return {
    page,
    pageSize: limit,
    totalCount,
    hasMore: (page + 1) * limit < totalCount,
    data: await views(deps, tenant, notifications),
  };
}

export async function getNotification(deps: Deps, tenant: Tenant, id: string): Promise<NotificationView> {
  const notification = await activity.findNotification(deps.db, id, tenant.environmentId);
  if (!notification) throw notFound(`Notification ${mention(id, "with this id")} was not found`);
  const [view] = await views(deps, tenant, [notification]);
  if (!view) throw notFound(`Notification ${mention(id, "with this id")} was not found`);
  return view;
}

export async function listExecutionDetails(
  deps: Deps,
  tenant: Tenant,
  input: { notificationId?: string; subscriberId?: string },
): Promise<activity.DetailView[]> {
  let subscriberRef: string | undefined;
  if (input.subscriberId !== undefined) {
    subscriberRef = (await findSubscriberRefs(deps, tenant, [input.subscriberId])).get(input.subscriberId);
    if (subscriberRef === undefined) return [];
  }
  return activity.listDetails(deps.db, tenant.environmentId, {
    ...(input.notificationId !== undefined ? { notificationIds: [input.notificationId] } : {}),
    ...(subscriberRef !== undefined ? { subscriberRef } : {}),
  });
}

// ---------------------------------------------------------------- stats (Novu's dashboard chart)

/** How many notifications the environment has had in the last week and the last calendar month. */
export async function activityStats(deps: Deps, tenant: Tenant) {
  const now = deps.clock.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  return activity.sentCounts(
    deps.db,
    tenant.environmentId,
    iso(addUnits(now, -1, "months")),
    iso(addUnits(now, -1, "weeks")),
  );
}

export interface DayStats {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  /** A notification counts once per channel of its workflow (step types), as Novu counts. */
  count: number;
  workflowIds: string[];
  channels: string[];
}

export const GRAPH_DAYS_DEFAULT = 32;

/** The notifications of the last `days` × 24 hours, per UTC day, newest day first; days without any are absent. */
export async function activityGraph(
  deps: Deps,
  tenant: Tenant,
  days = GRAPH_DAYS_DEFAULT,
): Promise<DayStats[]> {
  const since = new Date(addUnits(deps.clock.now(), -days, "days")).toISOString();
  const byDay = new Map<string, { count: number; workflowIds: Set<string>; channels: Set<string> }>();
  for (const row of await activity.dailyCounts(deps.db, tenant.environmentId, since)) {
    // As Novu's aggregation unwinds the channels: a notification without any counts for nothing.
    if (row.channels.length === 0) continue;
    let day = byDay.get(row.day);
    if (!day) {
      day = { count: 0, workflowIds: new Set(), channels: new Set() };
      byDay.set(row.day, day);
    }
    day.count += row.total * row.channels.length;
    day.workflowIds.add(row.workflowId);
    for (const channel of row.channels) day.channels.add(channel);
  }
  return [...byDay.entries()]
    .sort(([a], [b]) => (a < b ? 1 : -1))
    .map(([day, { count, workflowIds, channels }]) => ({
      day,
      count,
      workflowIds: [...workflowIds].sort(),
      channels: [...channels].sort(),
    }));
}
