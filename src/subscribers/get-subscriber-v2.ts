import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscriber } from "./presenter.ts";
import { Subscriber, SubscriberIdParams } from "./schemas.ts";
import { getSubscriber } from "./service.ts";

export const getSubscriberV2Route: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId",
    {
      schema: {
        operationId: "getSubscriberV2",
        tags: ["Subscribers"],
        summary: "Get a subscriber by your subscriberId",
        description:
          "Novu's /v2 read (@novu/api's `subscribers.retrieve`): the subscriber as GET /v1 shows it.",
        params: SubscriberIdParams,
        response: {
          200: described(Envelope(Subscriber), "The subscriber"),
          ...errorResponsesOf({
            400: "The subscriberId is over 128 characters or has control characters",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: presentSubscriber(await getSubscriber(depsOf(app), request.tenant, request.params.subscriberId)),
    }),
  );
};
