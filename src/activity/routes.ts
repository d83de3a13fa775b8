import type { RoutePlugin } from "../http/types.ts";
import { activityStatsRoutes } from "./get-activity-stats.ts";
import { getNotificationRoute } from "./get-notification.ts";
import { listExecutionDetailsRoute } from "./list-execution-details.ts";
import { listNotificationsRoute } from "./list-notifications.ts";

/** What happened: notifications with their jobs and execution details (docs/engine.md, "Reading what happened"). */
export const activityRoutes: RoutePlugin = async (app) => {
  await app.register(listNotificationsRoute);
  await app.register(activityStatsRoutes);
  await app.register(getNotificationRoute);
  await app.register(listExecutionDetailsRoute);
};
