import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { presentSubscriber } from "./presenter.ts";
import { CredentialsBody, Subscriber, SubscriberIdParams } from "./schemas.ts";
import { setCredentials } from "./service.ts";

/** `outbound`: what a webhookUrl may name (src/outbound.ts). */
export const setSubscriberCredentialsRoute: RoutePluginWith<{ outbound: OutboundPolicy }> = async (
  app,
  { outbound },
) => {
  app.put(
    "/subscribers/:subscriberId/credentials",
    {
      schema: {
        operationId: "setSubscriberCredentials",
        tags: ["Subscribers"],
        summary: "Set a subscriber's credentials for one provider (replacing them)",
        description:
          "The provider's credentials become exactly those sent: a webhookUrl or device tokens left out are " +
          "cleared. `PATCH` merges instead. They are kept sealed and answered masked; a webhookUrl or device " +
          "tokens sent back masked keep their stored values.",
        params: SubscriberIdParams,
        body: CredentialsBody,
        response: {
          200: described(Envelope(Subscriber), "The subscriber with its credentials"),
          ...errorResponsesOf({
            400: "Invalid body (a webhookUrl that is not an http(s) URL, or that names an internal address; a malformed providerId...)",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: presentSubscriber(
        await setCredentials(
          depsOf(app),
          request.tenant,
          request.params.subscriberId,
          request.body,
          "replace",
          outbound,
        ),
      ),
    }),
  );
};
