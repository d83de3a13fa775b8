import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentTopicV2 } from "./presenter.ts";
import { TopicKeyParams, TopicV2, UpdateTopicV2Body } from "./schemas.ts";
import { updateTopic } from "./service.ts";

export const updateTopicV2Route: RoutePlugin = async (app) => {
  app.patch(
    "/topics/:topicKey",
    {
      schema: {
        operationId: "updateTopicV2",
        tags: ["Topics"],
        summary: "Change a topic's name and/or data",
        description: "Novu's /v2 update (@novu/api's `topics.update`): `data` replaces what the topic had.",
        params: TopicKeyParams,
        body: UpdateTopicV2Body,
        response: {
          200: described(Envelope(TopicV2), "The topic after the change"),
          ...errorResponsesOf({
            400: "A name that is empty or over 200 characters",
            404: "No such topic in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: presentTopicV2(
        await updateTopic(depsOf(app), request.tenant, request.params.topicKey, request.body),
      ),
    }),
  );
};
