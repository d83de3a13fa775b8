import { markAllSubscriberMessages } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { MarkAllBody, MarkAllResponse, SubscriberIdParams } from "./schemas.ts";

export const markAllMessagesRoute: RoutePlugin = async (app) => {
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
      const { count } = await markAllSubscriberMessages(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        request.body.markAs,
      );
      return reply.code(201).send({ data: count });
    },
  );
};
