import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePluginWith } from "../http/types.ts";
import { NotificationEnvelope } from "./notification-schemas.ts";
import type { InboxRouteOptions } from "./options.ts";
import { setNotificationAction } from "./service.ts";
import { changeSubscriberNotification } from "./subscriber-notification-change.ts";
import { ContextQuery, SubscriberNotificationActionParams } from "./subscriber-notification-schemas.ts";

/**
 * PATCH /subscribers/:subscriberId/notifications/:notificationId/actions/:actionType/complete and
 * /revert: the primary or secondary action done, or undone.
 */
export const subscriberNotificationActionRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  const routes = [
    {
      path: "complete",
      status: "done",
      operationId: "completeSubscriberNotificationAction",
      summary: "Complete a subscriber's notification's primary or secondary action",
    },
    {
      path: "revert",
      status: "pending",
      operationId: "revertSubscriberNotificationAction",
      summary: "Revert a subscriber's notification's completed action",
    },
  ] as const;
  for (const { path, status, operationId, summary } of routes) {
    app.patch(
      `/subscribers/:subscriberId/notifications/:notificationId/actions/:actionType/${path}`,
      {
        schema: {
          operationId,
          tags: ["Inbox"],
          summary,
          params: SubscriberNotificationActionParams,
          querystring: ContextQuery,
          response: {
            200: described(NotificationEnvelope, "The notification, its action as changed"),
            ...errorResponsesOf({
              400: "actionType is neither primary nor secondary",
              404: "No such subscriber, or the subscriber has no such notification",
            }),
          },
        },
      },
      (request) =>
        changeSubscriberNotification(app, options, request, (deps, subscriber) =>
          setNotificationAction(
            deps,
            request.tenant,
            subscriber,
            request.params.notificationId,
            request.params.actionType,
            status,
          ),
        ),
    );
  }
};
