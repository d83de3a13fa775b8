import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { ActionBody, NotificationEnvelope, NotificationParams } from "./notification-schemas.ts";
import { presentInboxNotification } from "./presenter.ts";
import { setNotificationAction } from "./service.ts";

/** PATCH /notifications/:id/complete and /revert: the primary or secondary action done, or undone. */
export const notificationActionRoute: RoutePlugin = async (app) => {
  const routes = [
    {
      path: "complete",
      status: "done",
      operationId: "completeInboxNotificationAction",
      summary: "Complete a notification's primary or secondary action",
    },
    {
      path: "revert",
      status: "pending",
      operationId: "revertInboxNotificationAction",
      summary: "Revert a notification's completed action",
    },
  ] as const;
  for (const { path, status, operationId, summary } of routes) {
    app.patch(
      `/notifications/:id/${path}`,
      {
        schema: {
          operationId,
          tags: ["Inbox session"],
          summary,
          params: NotificationParams,
          body: ActionBody,
          response: {
            200: described(NotificationEnvelope, "The notification, its action as changed"),
            ...errorResponsesOf({
              400: "actionType is neither primary nor secondary",
              404: "The session's subscriber has no such notification",
            }),
          },
        },
      },
      async (request) => {
        const { subscriber } = request.subscriberSession;
        const notification = await setNotificationAction(
          depsOf(app),
          request.tenant,
          subscriber,
          request.params.id,
          request.body.actionType,
          status,
        );
        return { data: presentInboxNotification(notification, subscriber) };
      },
    );
  }
};
