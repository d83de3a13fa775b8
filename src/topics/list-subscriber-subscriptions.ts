import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import { presentSubscriptionV2 } from "./presenter.ts";
import { SubscriberSubscriptionsQuery, SubscriptionCursorPage } from "./schemas.ts";
import { pageSubscriptions } from "./service.ts";

export const listSubscriberSubscriptionsRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/subscriptions",
    {
      schema: {
        operationId: "listSubscriberSubscriptionsV2",
        tags: ["Topics"],
        summary: "A subscriber's topic subscriptions, a page at a time by cursor (newest first by default)",
        description:
          "Novu's /v2 list (@novu/api's `subscribers.topics.list`): each subscription with its topic and its " +
          "preferences; `key` narrows to the subscription to that topic.",
        params: SubscriberIdParams,
        querystring: SubscriberSubscriptionsQuery,
        response: {
          200: described(SubscriptionCursorPage, "One page, the cursors on either side, and how many match"),
          ...errorResponsesOf({
            400: "A query value out of range, or a cursor that names no subscription of the environment",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => {
      const { key, ...query } = request.query;
      const page = await pageSubscriptions(
        depsOf(app),
        request.tenant,
        { ...query, topicKey: key, subscriberId: request.params.subscriberId },
        "subscriber",
      );
      return {
        data: page.rows.map(presentSubscriptionV2),
        next: page.next,
        previous: page.previous,
        totalCount: page.totalCount,
        totalCountCapped: page.totalCountCapped,
      };
    },
  );
};
