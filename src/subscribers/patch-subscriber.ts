import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { presentSubscriber } from "./presenter.ts";
import { Subscriber, SubscriberIdParams, UpdateSubscriberBody } from "./schemas.ts";
import { updateSubscriber } from "./service.ts";

/** `outbound`: what a webhookUrl may name (src/outbound.ts). */
export const patchSubscriberRoute: RoutePluginWith<{ outbound: OutboundPolicy }> = async (
  app,
  { outbound },
) => {
  app.patch(
    "/subscribers/:subscriberId",
    {
      schema: {
        operationId: "patchSubscriber",
        tags: ["Subscribers"],
        summary: "Update a subscriber (the fields sent; the others keep their values)",
        description:
          "Novu's /v2 update (@novu/api's `subscribers.patch`), as PUT /v1/subscribers/{subscriberId}: `null` or an " +
          "empty string clears a field.",
        params: SubscriberIdParams,
        body: UpdateSubscriberBody,
        response: {
          200: described(Envelope(Subscriber), "The subscriber as stored after the update"),
          ...errorResponsesOf({
            400: "Invalid body (an email that is not one, a locale that is not a language tag, data over 64 KiB...)",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: presentSubscriber(
        await updateSubscriber(
          depsOf(app),
          request.tenant,
          request.params.subscriberId,
          request.body,
          outbound,
        ),
      ),
    }),
  );
};
