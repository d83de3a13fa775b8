import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { CreatedTopic, CreateTopicBody } from "./schemas.ts";
import { createTopic } from "./service.ts";

export const createTopicRoute: RoutePlugin = async (app) => {
  app.post(
    "/topics",
    {
      schema: {
        operationId: "createTopic",
        tags: ["Topics"],
        summary: "Create a topic",
        description: "The key is unique in the environment (409 for a key that is taken).",
        headers: IdempotencyKeyHeaders,
        body: CreateTopicBody,
        response: {
          201: replayable(described(CreatedTopic, "The new topic's id and key")),
          ...errorResponsesOf({
            400: "A key outside [A-Za-z0-9_:.-]{1,100}, or an empty name",
            409: "The environment has a topic with this key, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => {
        const topic = await createTopic(depsOf(app, db), request.tenant, request.body);
        return { data: { _id: topic.id, key: topic.key } };
      }),
  );
};
