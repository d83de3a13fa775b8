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
import { BulkTriggerBody, BulkTriggerResponse } from "./schemas.ts";
import { bulkTrigger } from "./service.ts";

export const bulkTriggerEventsRoute: RoutePlugin = async (app) => {
  app.post(
    "/events/trigger/bulk",
    {
      schema: {
        operationId: "bulkTriggerEvents",
        tags: ["Events"],
        summary: "Trigger up to 100 workflows at once",
        description:
          "Each event is accepted or refused on its own, in order, whole: a refused event gets `acknowledged: false` " +
          "and its errors, and the others still run. The environment's quotas hold the call together: when its " +
          "events would pass the subscribers the environment may reach this minute, or the jobs it may have " +
          "waiting or running, the call is a 429 with `Retry-After` and none of them is accepted; an event that " +
          "would reach more subscribers than one trigger may is refused on its own (`quota_exceeded: ...`).",
        headers: TriggerIdempotencyKeyHeaders,
        body: BulkTriggerBody,
        response: {
          201: replayable(described(BulkTriggerResponse, "One result per event, in order")),
          ...errorResponsesOf({
            400: "events missing, not an array, or over 100 items",
            422:
              "This Idempotency-Key was used for a different request; or the events together would reach more " +
              "subscribers than the environment may reach in a minute, or make more jobs than it may have " +
              "(`quota_exceeded: ...`): send fewer per call; nothing was written",
            429:
              "Too many requests, or the events together would pass a quota (the environment's recipients this " +
              "minute, or its jobs waiting or running): none was accepted; `Retry-After` says when to try again",
          }),
        },
      },
    },
    async (request, reply) => {
      const { results, repeat } = await bulkTrigger(
        engineDepsOf(app),
        request.tenant,
        request.body.events,
        requestKeyOf(request),
      );
      if (repeat && request.headers[IDEMPOTENCY_HEADER] !== undefined) reply.header(REPLAY_HEADER, "true");
      return reply.code(201).send({ data: results });
    },
  );
};
