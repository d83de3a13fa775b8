import { engineDepsOf } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePluginWith } from "../http/types.ts";
import { NotificationEnvelope, NotificationParams, SnoozeBody } from "./notification-schemas.ts";
import type { InboxSessionRouteOptions } from "./options.ts";
import { presentInboxNotification } from "./presenter.ts";
import { snoozeNotification } from "./service.ts";
import { changeOf } from "./session-check.ts";

export const snoozeNotificationRoute: RoutePluginWith<InboxSessionRouteOptions> = async (app, options) => {
  app.patch(
    "/notifications/:id/snooze",
    {
      schema: {
        operationId: "snoozeInboxNotification",
        tags: ["Inbox session"],
        summary: "Snooze a notification: hidden until `snoozeUntil`, then back, unread",
        params: NotificationParams,
        body: SnoozeBody,
        response: {
          200: described(NotificationEnvelope, "The notification, snoozed"),
          ...errorResponsesOf({
            400: "snoozeUntil is not in the future, or further ahead than maxSnoozeDurationHours (or snoozing is off)",
            404: "The session's subscriber has no such notification",
          }),
        },
      },
    },
    async (request) => {
      const { subscriber } = request.subscriberSession;
      const notification = await snoozeNotification(
        engineDepsOf(app),
        request.tenant,
        subscriber,
        request.params.id,
        request.body.snoozeUntil,
        options.maxSnoozeDurationHours,
      );
      options.onChange?.(changeOf(request));
      return { data: presentInboxNotification(notification, subscriber) };
    },
  );
};
