import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentTopic } from "./presenter.ts";
import { Topic, TopicKeyParams } from "./schemas.ts";
import { getTopic } from "./service.ts";

export const getTopicRoute: RoutePlugin = async (app) => {
  app.get(
    "/topics/:topicKey",
    {
      schema: {
        operationId: "getTopic",
        tags: ["Topics"],
        summary: "Get a topic by its key",
        params: TopicKeyParams,
        response: {
          200: described(Envelope(Topic), "The topic, with its subscribers' subscriberIds"),
          ...errorResponsesOf({
            400: "A key outside [A-Za-z0-9_:.-]{1,100}",
            404: "No such topic in the environment",
          }),
        },
      },
    },
    async (request) => {
      const found = await getTopic(depsOf(app), request.tenant, request.params.topicKey);
      return { data: presentTopic(found.topic, found.subscribers) };
    },
  );
};
