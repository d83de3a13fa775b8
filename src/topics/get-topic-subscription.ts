import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscription } from "./presenter.ts";
import { SubscriptionParamsV2, SubscriptionSchema } from "./schemas.ts";
import { getSubscription } from "./service.ts";

export const getTopicSubscriptionRoute: RoutePlugin = async (app) => {
  app.get(
    "/topics/:topicKey/subscriptions/:identifier",
    {
      schema: {
        operationId: "getTopicSubscriptionV2",
        tags: ["Topics"],
        summary: "One of a topic's subscriptions, by identifier (or id), with its preferences",
        description:
          "Novu's /v2 read (@novu/api's `topics.subscriptions.getSubscription`), as the inbox shows it.",
        params: SubscriptionParamsV2,
        response: {
          200: described(Envelope(SubscriptionSchema), "The subscription"),
          ...errorResponsesOf({ 404: "No such topic, or it has no such subscription" }),
        },
      },
    },
    async (request) => ({
      data: presentSubscription(
        await getSubscription(
          depsOf(app),
          request.tenant,
          request.params.topicKey,
          request.params.identifier,
        ),
      ),
    }),
  );
};
