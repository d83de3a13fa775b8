import type { RoutePluginWith } from "../http/types.ts";
import { createNotificationGroupRoute } from "./create-notification-group.ts";
import { deleteNotificationGroupRoute } from "./delete-notification-group.ts";
import { getNotificationGroupRoute } from "./get-notification-group.ts";
import { listNotificationGroupsRoute } from "./list-notification-groups.ts";
import type { GroupReferences } from "./service.ts";
import { updateNotificationGroupRoute } from "./update-notification-group.ts";

/** `references`: what uses groups in the features above this one (see GroupReferences). */
export const notificationGroupRoutes: RoutePluginWith<{ references: GroupReferences }> = async (
  app,
  { references },
) => {
  await app.register(createNotificationGroupRoute);
  await app.register(listNotificationGroupsRoute);
  await app.register(getNotificationGroupRoute);
  await app.register(updateNotificationGroupRoute);
  await app.register(deleteNotificationGroupRoute, { references });
};
