import type { RoutePlugin } from "../http/types.ts";
import { createNotificationGroupRoute } from "./create-notification-group.ts";
import { deleteNotificationGroupRoute } from "./delete-notification-group.ts";
import { getNotificationGroupRoute } from "./get-notification-group.ts";
import { listNotificationGroupsRoute } from "./list-notification-groups.ts";
import { updateNotificationGroupRoute } from "./update-notification-group.ts";

export const notificationGroupRoutes: RoutePlugin = async (app) => {
  await app.register(createNotificationGroupRoute);
  await app.register(listNotificationGroupsRoute);
  await app.register(getNotificationGroupRoute);
  await app.register(updateNotificationGroupRoute);
  await app.register(deleteNotificationGroupRoute);
};
