import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { deleteNotification } from "./service.ts";
import { announce, subscriberOf } from "./subscriber-notification-change.ts";
import { ContextQuery, SubscriberNotificationParams } from "./subscriber-notification-schemas.ts";

export const deleteSubscriberNotificationRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.delete(
    "/subscribers/:subscriberId/notifications/:notificationId",
    {
      schema: {
        operationId: "deleteSubscriberNotification",
        tags: ["Inbox"],
        summary: "Delete a subscriber's notification",
        params: SubscriberNotificationParams,
        querystring: ContextQuery,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({ 404: "No such subscriber, or the subscriber has no such notification" }),
        },
      },
    },
    async (request, reply) => {
      const subscriber = await subscriberOf(app, request);
      await deleteNotification(depsOf(app), subscriber, request.params.notificationId);
      announce(options, request.tenant, subscriber);
      return reply.code(204).send(null);
    },
  );
};
