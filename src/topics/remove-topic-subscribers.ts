import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { TopicKeyParams, TopicSubscribersBody } from "./schemas.ts";
import { removeSubscribers } from "./service.ts";

export const removeTopicSubscribersRoute: RoutePlugin = async (app) => {
  app.post(
    "/topics/:topicKey/subscribers/removal",
    {
      schema: {
        operationId: "removeTopicSubscribers",
        tags: ["Topics"],
        summary: "Remove subscribers from a topic",
        description: "subscriberIds that are not in the topic, or have no subscriber, are ignored.",
        headers: IdempotencyKeyHeaders,
        params: TopicKeyParams,
        body: TopicSubscribersBody,
        response: {
          204: replayable(NoContent("The subscribers are no longer in the topic")),
          ...errorResponsesOf({
            400: "Not a list of subscriberIds, or a malformed key",
            404: "No such topic in the environment",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) => {
      await idempotent(app.store.db, request, reply, 204, async (db) => {
        await removeSubscribers(
          depsOf(app, db),
          request.tenant,
          request.params.topicKey,
          request.body.subscribers,
        );
        return null;
      });
      if (!reply.sent) return reply.code(204).send(null);
      return reply;
    },
  );
};
