import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscriptionV2 } from "./presenter.ts";
import { DeleteSubscriptionsBody, SubscriptionsOutcome, TopicKeyParams } from "./schemas.ts";
import { deleteSubscriptions } from "./service.ts";

export const deleteTopicSubscriptionsRoute: RoutePlugin = async (app) => {
  app.delete(
    "/topics/:topicKey/subscriptions",
    {
      schema: {
        operationId: "deleteTopicSubscriptionsV2",
        tags: ["Topics"],
        summary: "End up to 100 of a topic's subscriptions",
        description:
          "Novu's /v2 unsubscribe (@novu/api's `topics.subscriptions.delete`): each item names a subscription by " +
          "`identifier`, or a subscriber (its subscription to the topic); those found end with their preferences " +
          "and are answered as they were; the others are listed in `errors`. When none is found, a 404.",
        params: TopicKeyParams,
        body: DeleteSubscriptionsBody,
        response: {
          200: described(SubscriptionsOutcome, "The subscriptions ended, and the items that named none"),
          ...errorResponsesOf({
            400: "No items, or more than 100",
            404: "No such topic, or no item names a subscription it has",
          }),
        },
      },
    },
    async (request) => {
      const { subscriberIds, subscriptions } = request.body;
      const field = subscriptions !== undefined ? "subscriptions" : "subscriberIds";
      const items = (subscriptions ?? subscriberIds ?? []).map((item) =>
        typeof item === "string" ? { subscriberId: item } : item,
      );
      const outcome = await deleteSubscriptions(depsOf(app), request.tenant, request.params.topicKey, {
        items,
        field,
      });
      return {
        data: outcome.deleted.map(presentSubscriptionV2),
        meta: {
          totalCount: items.length,
          successful: items.length - outcome.failed.length,
          failed: outcome.failed.length,
        },
        errors: outcome.failed,
      };
    },
  );
};
