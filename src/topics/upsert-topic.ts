import { conflict } from "../errors.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentTopicV2 } from "./presenter.ts";
import { TopicExists, TopicV2, UpsertTopicBody, UpsertTopicQuery } from "./schemas.ts";
import { upsertTopic } from "./service.ts";

export const upsertTopicRoute: RoutePlugin = async (app) => {
  app.post(
    "/topics",
    {
      schema: {
        operationId: "upsertTopic",
        tags: ["Topics"],
        summary: "Create a topic, or update the one with its key",
        description:
          "Novu's /v2 create (@novu/api's `topics.create`): 201 with the topic made; for a key the environment has, " +
          "200 with that topic, its name and data set to those sent; with `failIfExists=true` a 409 instead, whose " +
          "body carries the topic beside the error (as @novu/api reads it).",
        headers: IdempotencyKeyHeaders,
        querystring: UpsertTopicQuery,
        body: UpsertTopicBody,
        response: {
          200: replayable(described(Envelope(TopicV2), "The topic existed: as it is now")),
          201: replayable(described(Envelope(TopicV2), "The topic made")),
          ...errorResponsesOf({
            400: "A key that is not 1–100 letters, digits or _ : . -, or a name that is empty or over 200 characters",
            422: "This Idempotency-Key was used for a different request",
          }),
          409: described(TopicExists, "The topic exists (failIfExists), or the Idempotency-Key is in use"),
        },
      },
    },
    async (request, reply) =>
      idempotent(
        app.store.db,
        request,
        reply,
        (answer: { created: boolean }) => (answer.created ? 201 : 200),
        async (db) => {
          const { topic, created } = await upsertTopic(depsOf(app, db), request.tenant, request.body, {
            failIfExists: request.query.failIfExists,
          });
          if (request.query.failIfExists && !created)
            throw conflict(
              `A topic with the key ${topic.key} already exists`,
              undefined,
              presentTopicV2(topic),
            );
          return { data: presentTopicV2(topic), created };
        },
      ),
  );
};
