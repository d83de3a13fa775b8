import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { TopicSubscriber, TopicSubscriberParams } from "./schemas.ts";
import { getTopicSubscriber } from "./service.ts";

export const getTopicSubscriberRoute: RoutePlugin = async (app) => {
  app.get(
    "/topics/:topicKey/subscribers/:subscriberId",
    {
      schema: {
        operationId: "getTopicSubscriber",
        tags: ["Topics"],
        summary: "Check that a subscriber is in a topic",
        params: TopicSubscriberParams,
        response: {
          200: described(Envelope(TopicSubscriber), "The membership"),
          ...errorResponsesOf({
            400: "A malformed key",
            404: "No such topic or subscriber in the environment, or the subscriber is not in the topic",
          }),
        },
      },
    },
    async (request) => ({
      data: await getTopicSubscriber(
        depsOf(app),
        request.tenant,
        request.params.topicKey,
        request.params.subscriberId,
      ),
    }),
  );
};
