import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscriptionV2 } from "./presenter.ts";
import { SubscriptionCursorPage, TopicKeyParams, TopicSubscriptionsQuery } from "./schemas.ts";
import { pageSubscriptions } from "./service.ts";

export const listTopicSubscriptionsRoute: RoutePlugin = async (app) => {
  app.get(
    "/topics/:topicKey/subscriptions",
    {
      schema: {
        operationId: "listTopicSubscriptionsV2",
        tags: ["Topics"],
        summary: "A topic's subscriptions, a page at a time by cursor (newest first by default)",
        description:
          "Novu's /v2 list (@novu/api's `topics.subscriptions.list`): each subscription with its subscriber and " +
          "its preferences; `subscriberId` narrows to that subscriber's.",
        params: TopicKeyParams,
        querystring: TopicSubscriptionsQuery,
        response: {
          200: described(SubscriptionCursorPage, "One page, the cursors on either side, and how many match"),
          ...errorResponsesOf({
            400: "A query value out of range, or a cursor that names no subscription of the environment",
            404: "No such topic in the environment",
          }),
        },
      },
    },
    async (request) => {
      const page = await pageSubscriptions(
        depsOf(app),
        request.tenant,
        { ...request.query, topicKey: request.params.topicKey },
        "topic",
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
