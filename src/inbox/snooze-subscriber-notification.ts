import { engineDepsOf } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePluginWith } from "../http/types.ts";
import { NotificationEnvelope, SnoozeBody } from "./notification-schemas.ts";
import type { SnoozingRouteOptions } from "./options.ts";
import { snoozeNotification } from "./service.ts";
import { changeSubscriberNotification } from "./subscriber-notification-change.ts";
import { ContextQuery, SubscriberNotificationParams } from "./subscriber-notification-schemas.ts";

export const snoozeSubscriberNotificationRoute: RoutePluginWith<SnoozingRouteOptions> = async (
  app,
  options,
) => {
  app.patch(
    "/subscribers/:subscriberId/notifications/:notificationId/snooze",
    {
      schema: {
        operationId: "snoozeSubscriberNotification",
        tags: ["Inbox"],
        summary: "Snooze a subscriber's notification: hidden until `snoozeUntil`, then back, unread",
        params: SubscriberNotificationParams,
        querystring: ContextQuery,
        body: SnoozeBody,
        response: {
          200: described(NotificationEnvelope, "The notification, snoozed"),
          ...errorResponsesOf({
            400: "snoozeUntil is not in the future, or further ahead than INBOX_MAX_SNOOZE_DURATION_HOURS (or snoozing is off)",
            404: "No such subscriber, or the subscriber has no such notification",
          }),
        },
      },
    },
    (request) =>
      changeSubscriberNotification(app, options, request, (_deps, subscriber) =>
        snoozeNotification(
          engineDepsOf(app),
          request.tenant,
          subscriber,
          request.params.notificationId,
          request.body.snoozeUntil,
          options.maxSnoozeDurationHours,
        ),
      ),
  );
};
