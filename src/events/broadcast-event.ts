import { engineDepsOf } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePlugin } from "../http/types.ts";
import {
  IDEMPOTENCY_HEADER,
  REPLAY_HEADER,
  replayable,
  requestKeyOf,
  TriggerIdempotencyKeyHeaders,
} from "../idempotency/idempotency.ts";
import { BroadcastBody, TriggerResponse } from "./schemas.ts";
import { broadcast } from "./service.ts";

export const broadcastEventRoute: RoutePlugin = async (app) => {
  app.post(
    "/events/trigger/broadcast",
    {
      schema: {
        operationId: "broadcastEvent",
        tags: ["Events"],
        summary: "Trigger a workflow for every subscriber of the environment",
        description:
          "Acknowledged at once; the fan-out runs in the worker, a batch of subscribers at a time.",
        headers: TriggerIdempotencyKeyHeaders,
        body: BroadcastBody,
        response: {
          201: replayable(described(TriggerResponse, "The broadcast is stored")),
          ...errorResponsesOf({
            400: "Invalid body",
            422:
              "This Idempotency-Key was used for a different request, no workflow has this trigger identifier, " +
              "or the environment has more subscribers than the quotas " +
              "let one trigger reach",
            429:
              "Too many requests, or the environment is past a quota (its recipients this minute, or its jobs " +
              "waiting or running): nothing was written; `Retry-After` says when to try again",
          }),
        },
      },
    },
    async (request, reply) => {
      const accepted = await broadcast(
        engineDepsOf(app),
        request.tenant,
        request.body,
        requestKeyOf(request),
      );
      if (accepted.repeat && request.headers[IDEMPOTENCY_HEADER] !== undefined)
        reply.header(REPLAY_HEADER, "true");
      return reply.code(201).send({ data: accepted.ack });
    },
  );
};
