import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { NotificationMark } from "./domain.ts";
import { NotificationEnvelope, NotificationParams } from "./notification-schemas.ts";
import type { InboxSessionRouteOptions } from "./options.ts";
import { presentInboxNotification } from "./presenter.ts";
import { markNotification, unsnoozeNotification } from "./service.ts";
import { changeOf } from "./session-check.ts";

const MARKS: { mark: NotificationMark; operationId: string; summary: string }[] = [
  { mark: "read", operationId: "readInboxNotification", summary: "Mark a notification read (and seen)" },
  {
    mark: "unread",
    operationId: "unreadInboxNotification",
    summary: "Mark a notification unread (and take it out of the archive)",
  },
  {
    mark: "archive",
    operationId: "archiveInboxNotification",
    summary: "Archive a notification (and mark it read)",
  },
  {
    mark: "unarchive",
    operationId: "unarchiveInboxNotification",
    summary: "Take a notification out of the archive",
  },
];

/** PATCH /notifications/:id/read, /unread, /archive, /unarchive and /unsnooze: one notification changed. */
export const markNotificationRoute: RoutePluginWith<InboxSessionRouteOptions> = async (app, options) => {
  const responses = {
    200: described(NotificationEnvelope, "The notification as changed"),
    ...errorResponsesOf({ 404: "The session's subscriber has no such notification" }),
  };
  for (const { mark, operationId, summary } of MARKS) {
    app.patch(
      `/notifications/:id/${mark}`,
      {
        schema: {
          operationId,
          tags: ["Inbox session"],
          summary,
          params: NotificationParams,
          response: responses,
        },
      },
      async (request) => {
        const { subscriber } = request.subscriberSession;
        const notification = await markNotification(
          depsOf(app),
          request.tenant,
          subscriber,
          request.params.id,
          mark,
        );
        options.onChange?.(changeOf(request));
        return { data: presentInboxNotification(notification, subscriber) };
      },
    );
  }
  app.patch(
    "/notifications/:id/unsnooze",
    {
      schema: {
        operationId: "unsnoozeInboxNotification",
        tags: ["Inbox session"],
        summary: "End a notification's snooze now",
        params: NotificationParams,
        response: responses,
      },
    },
    async (request) => {
      const { subscriber } = request.subscriberSession;
      const notification = await unsnoozeNotification(
        depsOf(app),
        request.tenant,
        subscriber,
        request.params.id,
      );
      options.onChange?.(changeOf(request));
      return { data: presentInboxNotification(notification, subscriber) };
    },
  );
};
