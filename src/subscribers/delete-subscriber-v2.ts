import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { SubscriberDeleted, SubscriberIdParams } from "./schemas.ts";
import { deleteSubscriber, type SubscriberErasure } from "./service.ts";

export const deleteSubscriberV2Route: RoutePluginWith<{ erasure: SubscriberErasure }> = async (
  app,
  { erasure },
) => {
  app.delete(
    "/subscribers/:subscriberId",
    {
      schema: {
        operationId: "deleteSubscriberV2",
        tags: ["Subscribers"],
        summary: "Delete a subscriber",
        description:
          "Novu's /v2 delete (@novu/api's `subscribers.delete`), as DELETE /v1/subscribers/{subscriberId}: the " +
          "subscriber goes with its preferences, topic subscriptions and messages, and what has not run for it is canceled.",
        params: SubscriberIdParams,
        response: {
          200: described(SubscriberDeleted, "The subscriber is deleted"),
          ...errorResponsesOf({
            400: "The subscriberId is over 128 characters or has control characters",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => {
      await deleteSubscriber(depsOf(app), request.tenant, request.params.subscriberId, erasure);
      return { data: { acknowledged: true as const, status: "deleted" as const } };
    },
  );
};
