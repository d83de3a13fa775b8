import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentTopic } from "./presenter.ts";
import { RenameTopicBody, Topic, TopicKeyParams } from "./schemas.ts";
import { renameTopic } from "./service.ts";

export const renameTopicRoute: RoutePlugin = async (app) => {
  app.patch(
    "/topics/:topicKey",
    {
      schema: {
        operationId: "renameTopic",
        tags: ["Topics"],
        summary: "Rename a topic",
        headers: IdempotencyKeyHeaders,
        params: TopicKeyParams,
        body: RenameTopicBody,
        response: {
          200: replayable(described(Envelope(Topic), "The topic after the change")),
          ...errorResponsesOf({
            400: "An empty name, or a key outside [A-Za-z0-9_:.-]{1,100}",
            404: "No such topic in the environment",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => {
        const renamed = await renameTopic(
          depsOf(app, db),
          request.tenant,
          request.params.topicKey,
          request.body.name,
        );
        return { data: presentTopic(renamed.topic, renamed.subscribers) };
      }),
  );
};
