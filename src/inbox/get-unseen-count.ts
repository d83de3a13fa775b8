import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { CountResponse, SubscriberIdParams, UnseenQuery } from "./schemas.ts";
import { countSubscriberMessages } from "./service.ts";

export const getUnseenCountRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/notifications/unseen",
    {
      schema: {
        operationId: "getSubscriberUnseenCount",
        tags: ["Inbox"],
        summary: "How many of a subscriber's in-app messages are unseen",
        params: SubscriberIdParams,
        querystring: UnseenQuery,
        response: {
          200: described(CountResponse, "The count"),
          ...errorResponsesOf({ 400: "Invalid query", 404: "No such subscriber" }),
        },
      },
    },
    async (request) => ({
      data: {
        count: await countSubscriberMessages(depsOf(app), request.tenant, request.params.subscriberId, {
          seen: request.query.seen ?? false,
        }),
      },
    }),
  );
};
