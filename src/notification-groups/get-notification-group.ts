import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentGroup } from "./presenter.ts";
import { GroupIdParams, NotificationGroup } from "./schemas.ts";
import { getGroup } from "./service.ts";

export const getNotificationGroupRoute: RoutePlugin = async (app) => {
  app.get(
    "/notification-groups/:id",
    {
      schema: {
        operationId: "getNotificationGroup",
        tags: ["Notification groups"],
        summary: "Get a notification group",
        params: GroupIdParams,
        response: {
          200: described(Envelope(NotificationGroup), "The group"),
          ...errorResponsesOf({
            400: "The id is not 24 lowercase hex characters",
            404: "No such group in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: presentGroup(await getGroup(depsOf(app), request.tenant, request.params.id)),
    }),
  );
};
