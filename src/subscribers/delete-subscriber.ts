import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { SubscriberDeleted, SubscriberIdParams } from "./schemas.ts";
import { deleteSubscriber, type SubscriberErasure } from "./service.ts";

export const deleteSubscriberRoute: RoutePluginWith<{ erasure: SubscriberErasure }> = async (
  app,
  { erasure },
) => {
  app.delete(
    "/subscribers/:subscriberId",
    {
      schema: {
        operationId: "deleteSubscriber",
        tags: ["Subscribers"],
        summary: "Delete a subscriber",
        description:
          "The subscriber goes, with its preferences, topic memberships and messages; what has not run yet " +
          "for it (a delayed step, a step waiting its turn) is canceled. The same subscriberId may be " +
          "created again later (as a new subscriber, with a new `_id`, none of the old messages).",
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
