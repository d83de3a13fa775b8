import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { feedIdentifiersOf, MarkAllBody, MarkAllResponse, SubscriberIdParams } from "./schemas.ts";
import { markAllSubscriberMessages } from "./service.ts";

export const markAllMessagesRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.post(
    "/subscribers/:subscriberId/messages/mark-all",
    {
      schema: {
        operationId: "markAllSubscriberMessages",
        tags: ["Inbox"],
        summary: "Mark all of a subscriber's in-app messages read or seen",
        params: SubscriberIdParams,
        body: MarkAllBody,
        response: {
          201: described(MarkAllResponse, "How many changed"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such subscriber" }),
        },
      },
    },
    async (request, reply) => {
      const { count, subscriber } = await markAllSubscriberMessages(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        request.body.markAs,
        feedIdentifiersOf(request.body.feedIdentifier),
      );
      options.onChange?.({ environmentId: request.tenant.environmentId, subscriberRef: subscriber.id });
      return reply.code(201).send({ data: count });
    },
  );
};
