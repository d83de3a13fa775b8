import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { BulkCreateBody, BulkResult, MAX_BULK_SUBSCRIBERS } from "./schemas.ts";
import { bulkUpsertSubscribers } from "./service.ts";

/** `outbound`: what a webhookUrl may name (src/outbound.ts). */
export const bulkCreateSubscribersRoute: RoutePluginWith<{ outbound: OutboundPolicy }> = async (
  app,
  { outbound },
) => {
  app.post(
    "/subscribers/bulk",
    {
      schema: {
        operationId: "bulkCreateSubscribers",
        tags: ["Subscribers"],
        summary: `Create or update up to ${MAX_BULK_SUBSCRIBERS} subscribers at once`,
        description:
          "Each entry is upserted as `POST /v1/subscribers` would, all in one transaction, and reported as " +
          "created or updated. An entry that breaks a rule (an empty subscriberId, an email that is not one...) " +
          "is reported in `failed` with the reason and the others are written. A body that is not a list of " +
          `subscribers, or lists more than ${MAX_BULK_SUBSCRIBERS}, is a 400 and nothing is written.`,
        headers: IdempotencyKeyHeaders,
        body: BulkCreateBody,
        response: {
          201: replayable(described(BulkResult, "What happened to each entry")),
          ...errorResponsesOf({
            400: `Not a list of subscribers, an entry of the wrong shape, or more than ${MAX_BULK_SUBSCRIBERS}`,
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: await bulkUpsertSubscribers(
          depsOf(app, db),
          request.tenant,
          request.body.subscribers,
          outbound,
        ),
      })),
  );
};
