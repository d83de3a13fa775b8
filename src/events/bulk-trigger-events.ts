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
          "and its errors, and the others still run. An event past one of the environment's quotas is refused so " +
          "(`quota_exceeded: ...`); when one was refused for now, the answer carries `Retry-After`.",
        headers: TriggerIdempotencyKeyHeaders,
        body: BulkTriggerBody,
        response: {
          201: replayable(described(BulkTriggerResponse, "One result per event, in order")),
          ...errorResponsesOf({
            400: "events missing, not an array, or over 100 items",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) => {
      const { results, retryAfter, repeat } = await bulkTrigger(
        engineDepsOf(app),
        request.tenant,
        request.body.events,
        requestKeyOf(request),
      );
      if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
      if (repeat && request.headers[IDEMPOTENCY_HEADER] !== undefined) reply.header(REPLAY_HEADER, "true");
      return reply.code(201).send({ data: results });
    },
  );
};
