import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePluginWith } from "../http/types.ts";
import type { NotificationMark } from "./domain.ts";
import { NotificationEnvelope } from "./notification-schemas.ts";
import type { InboxRouteOptions } from "./options.ts";
import { markNotification, unsnoozeNotification } from "./service.ts";
import { changeSubscriberNotification } from "./subscriber-notification-change.ts";
import { ContextQuery, SubscriberNotificationParams } from "./subscriber-notification-schemas.ts";

const MARKS: { mark: NotificationMark; operationId: string; summary: string }[] = [
  {
    mark: "read",
    operationId: "readSubscriberNotification",
    summary: "Mark a subscriber's notification read (and seen)",
  },
  {
    mark: "unread",
    operationId: "unreadSubscriberNotification",
    summary: "Mark a subscriber's notification unread (and take it out of the archive)",
  },
  {
    mark: "archive",
    operationId: "archiveSubscriberNotification",
    summary: "Archive a subscriber's notification (and mark it read)",
  },
  {
    mark: "unarchive",
    operationId: "unarchiveSubscriberNotification",
    summary: "Take a subscriber's notification out of the archive",
  },
];

/**
 * PATCH /subscribers/:subscriberId/notifications/:notificationId/read, /unread, /archive,
 * /unarchive and /unsnooze: one notification changed, as its inbox changes it.
 */
export const markSubscriberNotificationRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  const responses = {
    200: described(NotificationEnvelope, "The notification as changed"),
    ...errorResponsesOf({ 404: "No such subscriber, or the subscriber has no such notification" }),
  };
  for (const { mark, operationId, summary } of MARKS) {
    app.patch(
      `/subscribers/:subscriberId/notifications/:notificationId/${mark}`,
      {
        schema: {
          operationId,
          tags: ["Inbox"],
          summary,
          params: SubscriberNotificationParams,
          querystring: ContextQuery,
          response: responses,
        },
      },
      (request) =>
        changeSubscriberNotification(app, options, request, (deps, subscriber) =>
          markNotification(deps, request.tenant, subscriber, request.params.notificationId, mark),
        ),
    );
  }
  app.patch(
    "/subscribers/:subscriberId/notifications/:notificationId/unsnooze",
    {
      schema: {
        operationId: "unsnoozeSubscriberNotification",
        tags: ["Inbox"],
        summary: "End a subscriber's notification's snooze now",
        params: SubscriberNotificationParams,
        querystring: ContextQuery,
        response: responses,
      },
    },
    (request) =>
      changeSubscriberNotification(app, options, request, (deps, subscriber) =>
        unsnoozeNotification(deps, request.tenant, subscriber, request.params.notificationId),
      ),
  );
};
