import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentNotification } from "./presenter.ts";
import { NotificationIdParams, NotificationResponse } from "./schemas.ts";
import { getNotification } from "./service.ts";

export const getNotificationRoute: RoutePlugin = async (app) => {
  app.get(
    "/notifications/:notificationId",
    {
      schema: {
        operationId: "getNotification",
        tags: ["Activity"],
        summary: "One notification with its jobs and their execution details",
        params: NotificationIdParams,
        response: {
          200: described(NotificationResponse, "The notification"),
          ...errorResponsesOf({ 400: "Not an id", 404: "No such notification in the environment" }),
        },
      },
    },
    async (request) => ({
      data: presentNotification(
        await getNotification(depsOf(app), request.tenant, request.params.notificationId),
      ),
    }),
  );
};
