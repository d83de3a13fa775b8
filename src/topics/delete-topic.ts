import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { TopicKeyParams } from "./schemas.ts";
import { deleteTopic } from "./service.ts";

export const deleteTopicRoute: RoutePlugin = async (app) => {
  app.delete(
    "/topics/:topicKey",
    {
      schema: {
        operationId: "deleteTopic",
        tags: ["Topics"],
        summary: "Delete a topic that has no subscribers",
        description: "As Novu: a topic that still has subscribers is a 409; remove them first.",
        params: TopicKeyParams,
        response: {
          204: NoContent("The topic is deleted"),
          ...errorResponsesOf({
            400: "A key outside [A-Za-z0-9_:.-]{1,100}",
            404: "No such topic in the environment",
            409: "The topic still has subscribers (the message says how many)",
          }),
        },
      },
    },
    async (request, reply) => {
      await deleteTopic(depsOf(app), request.tenant, request.params.topicKey);
      return reply.code(204).send(null);
    },
  );
};
