import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { presentSubscriber } from "./presenter.ts";
import { CredentialsBody, Subscriber, SubscriberIdParams } from "./schemas.ts";
import { setCredentials } from "./service.ts";

/** `outbound`: what a webhookUrl may name (src/outbound.ts). */
export const modifySubscriberCredentialsRoute: RoutePluginWith<{ outbound: OutboundPolicy }> = async (
  app,
  { outbound },
) => {
  app.patch(
    "/subscribers/:subscriberId/credentials",
    {
      schema: {
        operationId: "modifySubscriberCredentials",
        tags: ["Subscribers"],
        summary: "Add to a subscriber's credentials for one provider",
        description:
          "A sent webhookUrl replaces the old one; sent device tokens join the old ones (an empty list clears " +
          "them). What is left out stays. They are kept sealed and answered masked.",
        headers: IdempotencyKeyHeaders,
        params: SubscriberIdParams,
        body: CredentialsBody,
        response: {
          200: replayable(described(Envelope(Subscriber), "The subscriber with its credentials")),
          ...errorResponsesOf({
            400: "Invalid body (a webhookUrl that is not an http(s) URL, or that names an internal address; a malformed providerId...)",
            404: "No such subscriber in the environment",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: presentSubscriber(
          await setCredentials(
            depsOf(app, db),
            request.tenant,
            request.params.subscriberId,
            request.body,
            "merge",
            outbound,
          ),
        ),
      })),
  );
};
