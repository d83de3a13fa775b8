import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { BulkAction } from "./domain.ts";
import { readFilter } from "./filters.ts";
import { BulkBody, SeenBody } from "./notification-schemas.ts";
import type { InboxSessionRouteOptions } from "./options.ts";
import { markNotificationsSeen, updateAllNotifications } from "./service.ts";
import { changeOf } from "./session-check.ts";

const ACTIONS: { path: string; action: BulkAction; operationId: string; summary: string }[] = [
  {
    path: "read",
    action: "read",
    operationId: "readAllInboxNotifications",
    summary: "Mark every notification read",
  },
  {
    path: "archive",
    action: "archive",
    operationId: "archiveAllInboxNotifications",
    summary: "Archive every notification",
  },
  {
    path: "read-archive",
    action: "archive-read",
    operationId: "archiveReadInboxNotifications",
    summary: "Archive every notification that is read",
  },
  {
    path: "delete",
    action: "delete",
    operationId: "deleteAllInboxNotifications",
    summary: "Delete every notification",
  },
];

/** The tags and data a bulk body limits itself to. */
const scopeOf = (body: { tags?: unknown; data?: unknown } | undefined) =>
  readFilter({ tags: body?.tags ?? undefined, data: body?.data ?? undefined });

/** POST /notifications/seen, /read, /archive, /read-archive and /delete: many notifications at once. */
export const bulkNotificationsRoute: RoutePluginWith<InboxSessionRouteOptions> = async (app, options) => {
  const responses = {
    204: NoContent("Done (also when nothing matched)"),
    ...errorResponsesOf({ 400: "tags or data is not a filter" }),
  };
  app.post(
    "/notifications/seen",
    {
      schema: {
        operationId: "seeInboxNotifications",
        tags: ["Inbox session"],
        summary: "Mark notifications seen: these ids, or all with the tags and data",
        body: SeenBody,
        response: responses,
      },
    },
    async (request, reply) => {
      const ids = request.body?.notificationIds;
      const changed = await markNotificationsSeen(depsOf(app), request.subscriberSession.subscriber, {
        filter: scopeOf(request.body),
        ...(ids ? { ids } : {}),
      });
      if (changed > 0) options.onChange?.(changeOf(request));
      return reply.code(204).send(null);
    },
  );
  for (const { path, action, operationId, summary } of ACTIONS) {
    app.post(
      `/notifications/${path}`,
      {
        schema: {
          operationId,
          tags: ["Inbox session"],
          summary,
          description:
            "Limited to the notifications with the tags and data given, when given; never the snoozed but for a delete.",
          body: BulkBody,
          response: responses,
        },
      },
      async (request, reply) => {
        const changed = await updateAllNotifications(
          depsOf(app),
          request.subscriberSession.subscriber,
          action,
          scopeOf(request.body),
        );
        if (changed > 0) options.onChange?.(changeOf(request));
        return reply.code(204).send(null);
      },
    );
  }
};
