import { keyGuardedRoute } from "../auth/guarded-route.ts";
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
import { TriggerBody, TriggerResponse } from "./schemas.ts";
import { trigger } from "./service.ts";

export const triggerEventRoute: RoutePlugin = async (app) => {
  app.post(
    "/events/trigger",
    // The workflow's lookup re-checks the API key: no separate key lookup.
    keyGuardedRoute({
      schema: {
        operationId: "triggerEvent",
        tags: ["Events"],
        summary: "Trigger a workflow for its recipients",
        description:
          "The 201 is the commit: the notifications and their first jobs (or one fan-out job, for topics and long " +
          "lists) are stored before the answer. A transactionId the environment has seen returns the first " +
          "acknowledgement again and runs nothing twice. An inactive workflow answers `trigger_not_active` and " +
          "sends nothing; its notifications are recorded all the same, their jobs skipped, so that the activity " +
          "shows the trigger and why. A subscriberId that does not exist is created, and its notification says so.",
        headers: TriggerIdempotencyKeyHeaders,
        body: TriggerBody,
        response: {
          201: replayable(
            described(TriggerResponse, "The trigger is stored; its status says whether anything runs"),
          ),
          ...errorResponsesOf({
            400: "Missing name or to, a malformed recipient, payload or overrides, or a transactionId over 255 characters",
            422:
              "This Idempotency-Key was used for a different request, no workflow has this trigger identifier, a topic named in `to` does not exist, or the trigger would " +
              "reach more subscribers (or make more jobs) than the environment's quotas let one trigger",
            429:
              "Too many requests, or the environment is past a quota (its recipients this minute, or its jobs " +
              "waiting or running): nothing was written; `Retry-After` says when to try again",
          }),
        },
      },
      handler: async (request, reply, claim) => {
        const accepted = await trigger(engineDepsOf(app), claim, request.body, requestKeyOf(request));
        if (accepted.repeat && request.headers[IDEMPOTENCY_HEADER] !== undefined)
          reply.header(REPLAY_HEADER, "true");
        return reply.code(201).send({ data: accepted.ack });
      },
    }),
  );
};
