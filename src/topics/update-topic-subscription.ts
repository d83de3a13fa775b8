import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscriptionV2 } from "./presenter.ts";
import { SubscriptionParamsV2, SubscriptionV2, UpdateSubscriptionV2Body } from "./schemas.ts";
import { updateSubscription } from "./service.ts";

export const updateTopicSubscriptionRoute: RoutePlugin = async (app) => {
  app.patch(
    "/topics/:topicKey/subscriptions/:identifier",
    {
      schema: {
        operationId: "updateTopicSubscriptionV2",
        tags: ["Topics"],
        summary: "Rename a subscription and/or replace its preferences",
        description:
          "Novu's /v2 change (@novu/api's `topics.subscriptions.update`): the `preferences` sent replace those the " +
          "subscription had, as the inbox replaces them.",
        params: SubscriptionParamsV2,
        body: UpdateSubscriptionV2Body,
        response: {
          200: described(Envelope(SubscriptionV2), "The subscription after the change"),
          ...errorResponsesOf({
            400: "A name that is empty or over 200 characters, a bad condition, or a critical workflow turned off",
            404: "No such topic or subscription, or a workflow the environment does not have",
          }),
        },
      },
    },
    async (request) => ({
      data: presentSubscriptionV2(
        await updateSubscription(
          depsOf(app),
          request.tenant,
          request.params.topicKey,
          request.params.identifier,
          request.body,
        ),
      ),
    }),
  );
};
