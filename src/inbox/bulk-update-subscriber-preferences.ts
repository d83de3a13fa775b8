import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import { getSubscriber } from "../subscribers/service.ts";
import { bulkUpdateInboxPreferences } from "../topics/service.ts";
import { presentWorkflowPreference } from "./preference-presenter.ts";
import { BulkSubscriberPreferencesBody, InboxPreference } from "./preference-schemas.ts";

export const bulkUpdateSubscriberPreferencesRoute: RoutePlugin = async (app) => {
  app.patch(
    "/subscribers/:subscriberId/preferences/bulk",
    {
      schema: {
        operationId: "bulkUpdateSubscriberPreferencesV2",
        tags: ["Subscribers"],
        summary: "Change a subscriber's preference for up to 100 workflows at once",
        description:
          "Novu's /v2 bulk change (@novu/api's `subscribers.preferences.bulkUpdate`): the inbox's bulk change for " +
          "the subscriber named, in one transaction. Any unknown workflow is a 404 naming it and nothing is " +
          "written; a workflow named twice takes the last item.",
        params: SubscriberIdParams,
        body: BulkSubscriberPreferencesBody,
        response: {
          200: described(
            Envelope(Type.Array(InboxPreference)),
            "Each workflow's preference after the change",
          ),
          ...errorResponsesOf({
            400: "No preferences, more than 100, or a critical workflow turned off",
            404: "No such subscriber, or a workflow the environment does not have",
          }),
        },
      },
    },
    async (request) => {
      const deps = depsOf(app);
      const subscriber = await getSubscriber(deps, request.tenant, request.params.subscriberId);
      const results = await bulkUpdateInboxPreferences(
        deps,
        request.tenant,
        { subscriberRef: subscriber.id, subscriberId: subscriber.subscriberId },
        request.body.preferences.map((item) => ({ workflowId: item.workflowId, channels: item.channels })),
      );
      return {
        data: results.flatMap((result) =>
          result.kind === "workflow" ? [presentWorkflowPreference(result.preference)] : [],
        ),
      };
    },
  );
};
