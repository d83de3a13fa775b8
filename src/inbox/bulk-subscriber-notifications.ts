import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import type { BulkAction } from "./domain.ts";
import { readFilter } from "./filters.ts";
import type { InboxRouteOptions } from "./options.ts";
import { markNotificationsSeen, updateAllNotifications } from "./service.ts";
import { announce, subscriberOf } from "./subscriber-notification-change.ts";
import { SubscriberBulkBody, SubscriberSeenBody } from "./subscriber-notification-schemas.ts";

const ACTIONS: { path: string; action: BulkAction; operationId: string; summary: string }[] = [
  {
    path: "read",
    action: "read",
    operationId: "readAllSubscriberNotifications",
    summary: "Mark every notification of a subscriber read",
  },
  {
    path: "archive",
    action: "archive",
    operationId: "archiveAllSubscriberNotifications",
    summary: "Archive every notification of a subscriber",
  },
  {
    path: "read-archive",
    action: "archive-read",
    operationId: "archiveReadSubscriberNotifications",
    summary: "Archive every notification of a subscriber that is read",
  },
  {
    path: "delete",
    action: "delete",
    operationId: "deleteAllSubscriberNotifications",
    summary: "Delete every notification of a subscriber",
  },
];

/** The tags and data a bulk body limits itself to. */
const scopeOf = (body: { tags?: unknown; data?: unknown } | undefined) =>
  readFilter({ tags: body?.tags ?? undefined, data: body?.data ?? undefined });

/**
 * POST /subscribers/:subscriberId/notifications/seen, /read, /archive, /read-archive and /delete:
 * many of a subscriber's notifications at once, as its inbox changes them.
 */
export const bulkSubscriberNotificationsRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  const responses = {
    204: NoContent("Done (also when nothing matched)"),
    ...errorResponsesOf({ 400: "tags or data is not a filter", 404: "No such subscriber" }),
  };
  app.post(
    "/subscribers/:subscriberId/notifications/seen",
    {
      schema: {
        operationId: "seeSubscriberNotifications",
        tags: ["Inbox"],
        summary: "Mark a subscriber's notifications seen: these ids, or all with the tags and data",
        params: SubscriberIdParams,
        body: SubscriberSeenBody,
        response: responses,
      },
    },
    async (request, reply) => {
      const filter = scopeOf(request.body);
      const ids = request.body?.notificationIds;
      const subscriber = await subscriberOf(app, request);
      const changed = await markNotificationsSeen(depsOf(app), subscriber, {
        filter,
        ...(ids ? { ids } : {}),
      });
      if (changed > 0) announce(options, request.tenant, subscriber);
      return reply.code(204).send(null);
    },
  );
  for (const { path, action, operationId, summary } of ACTIONS) {
    app.post(
      `/subscribers/:subscriberId/notifications/${path}`,
      {
        schema: {
          operationId,
          tags: ["Inbox"],
          summary,
          description:
            "Limited to the notifications with the tags and data given, when given; never the snoozed but for a delete.",
          params: SubscriberIdParams,
          body: SubscriberBulkBody,
          response: responses,
        },
      },
      async (request, reply) => {
        const filter = scopeOf(request.body);
        const subscriber = await subscriberOf(app, request);
        const changed = await updateAllNotifications(depsOf(app), subscriber, action, filter);
        if (changed > 0) announce(options, request.tenant, subscriber);
        return reply.code(204).send(null);
      },
    );
  }
};
