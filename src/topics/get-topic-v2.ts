import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentTopicV2 } from "./presenter.ts";
import { TopicKeyParams, TopicV2 } from "./schemas.ts";
import { getTopicByKey } from "./service.ts";

export const getTopicV2Route: RoutePlugin = async (app) => {
  app.get(
    "/topics/:topicKey",
    {
      schema: {
        operationId: "getTopicV2",
        tags: ["Topics"],
        summary: "Get a topic by its key",
        description: "Novu's /v2 read (@novu/api's `topics.get`).",
        params: TopicKeyParams,
        response: {
          200: described(Envelope(TopicV2), "The topic"),
          ...errorResponsesOf({ 400: "A key that is not one", 404: "No such topic in the environment" }),
        },
      },
    },
    async (request) => ({
      data: presentTopicV2(await getTopicByKey(depsOf(app), request.tenant, request.params.topicKey)),
    }),
  );
};
