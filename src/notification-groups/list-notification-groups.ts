import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentGroup } from "./presenter.ts";
import { NotificationGroup } from "./schemas.ts";
import { listGroups } from "./service.ts";

export const listNotificationGroupsRoute: RoutePlugin = async (app) => {
  app.get(
    "/notification-groups",
    {
      schema: {
        operationId: "listNotificationGroups",
        tags: ["Notification groups"],
        summary: "List the environment's notification groups, sorted by name",
        response: {
          200: described(Type.Object({ data: Type.Array(NotificationGroup) }), "The groups, sorted by name"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({ data: (await listGroups(depsOf(app), request.tenant)).map(presentGroup) }),
  );
};
