import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { TopicDeletedV2, TopicKeyParams } from "./schemas.ts";
import { deleteTopicWithSubscriptions } from "./service.ts";

export const deleteTopicV2Route: RoutePlugin = async (app) => {
  app.delete(
    "/topics/:topicKey",
    {
      schema: {
        operationId: "deleteTopicV2",
        tags: ["Topics"],
        summary: "Delete a topic with its subscriptions",
        description:
          "Novu's /v2 delete (@novu/api's `topics.delete`): the topic goes with its subscriptions and their " +
          "preferences (DELETE /v1/topics/{topicKey} refuses while it has subscribers).",
        params: TopicKeyParams,
        response: {
          200: described(TopicDeletedV2, "The topic is deleted"),
          ...errorResponsesOf({ 400: "A key that is not one", 404: "No such topic in the environment" }),
        },
      },
    },
    async (request) => {
      await deleteTopicWithSubscriptions(depsOf(app), request.tenant, request.params.topicKey);
      return { data: { acknowledged: true as const } };
    },
  );
};
