import { conflict, mention } from "../errors.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { presentSubscriber } from "./presenter.ts";
import { CreateSubscriberBody, CreateSubscriberQuery, Subscriber, SubscriberExists } from "./schemas.ts";
import { createSubscriber } from "./service.ts";

/** `outbound`: what a webhookUrl may name (src/outbound.ts). */
export const createSubscriberV2Route: RoutePluginWith<{ outbound: OutboundPolicy }> = async (
  app,
  { outbound },
) => {
  app.post(
    "/subscribers",
    {
      schema: {
        operationId: "createSubscriberV2",
        tags: ["Subscribers"],
        summary: "Create a subscriber (or update the one with its subscriberId)",
        description:
          "Novu's /v2 create (@novu/api's `subscribers.create`): as POST /v1/subscribers, an upsert by subscriberId, " +
          "unless `failIfExists=true`: then a subscriberId the environment has is a 409 whose body carries that " +
          "subscriber beside the error (as @novu/api reads it), and nothing changes.",
        headers: IdempotencyKeyHeaders,
        querystring: CreateSubscriberQuery,
        body: CreateSubscriberBody,
        response: {
          201: replayable(described(Envelope(Subscriber), "The subscriber as stored")),
          ...errorResponsesOf({
            400: "Invalid body: subscriberId empty, over 128 characters or with control characters; email, locale or data invalid",
            409:
              "With failIfExists: the subscriber exists (the body has its fields beside the error's); or a request " +
              "with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
          409: described(
            SubscriberExists,
            "The subscriber exists (failIfExists), or the Idempotency-Key is in use",
          ),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => {
        const { subscriber, created } = await createSubscriber(
          depsOf(app, db),
          request.tenant,
          request.body,
          { failIfExists: request.query.failIfExists },
          outbound,
        );
        if (request.query.failIfExists && !created)
          throw conflict(
            `Subscriber ${mention(subscriber.subscriberId, "with this subscriberId")} already exists`,
            undefined,
            presentSubscriber(subscriber),
          );
        return { data: presentSubscriber(subscriber) };
      }),
  );
};
