import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { presentSubscriber } from "./presenter.ts";
import { CreateSubscriberBody, Subscriber } from "./schemas.ts";
import { upsertSubscriber } from "./service.ts";

/** `outbound`: what a webhookUrl may name (src/outbound.ts). */
export const createSubscriberRoute: RoutePluginWith<{ outbound: OutboundPolicy }> = async (
  app,
  { outbound },
) => {
  app.post(
    "/subscribers",
    {
      schema: {
        operationId: "createSubscriber",
        tags: ["Subscribers"],
        summary: "Create or update a subscriber (by subscriberId)",
        description:
          "An upsert, as Novu's `identify`: a new subscriberId creates the subscriber; a known one updates the " +
          "fields sent (the others keep their values) and keeps its `_id`. Sent `channels` set those providers' " +
          "credentials. Always 201.",
        headers: IdempotencyKeyHeaders,
        body: CreateSubscriberBody,
        response: {
          201: replayable(described(Envelope(Subscriber), "The subscriber as stored")),
          ...errorResponsesOf({
            400: "Invalid body: subscriberId empty, over 128 characters or with control characters; email, locale or data invalid",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentSubscriber(
          await upsertSubscriber(depsOf(app, db), request.tenant, request.body, outbound),
        ),
      })),
  );
};
