import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams, WorkflowPreference } from "./schemas.ts";
import { listWorkflowPreferences } from "./service.ts";

export const listSubscriberPreferencesRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/preferences",
    {
      schema: {
        operationId: "listSubscriberPreferences",
        tags: ["Subscribers"],
        summary: "A subscriber's preference for each active workflow",
        description:
          "One entry per active workflow: the workflow (`template`) and the subscriber's effective preference " +
          "for it (their own choices over the workflow's preferenceSettings), over the channels its active steps " +
          "use, with `overrides` saying where each value comes from (`template` or `subscriber`). Critical " +
          "workflows say so, and are always on. `includeInactiveChannels` (sent by @novu/node) is accepted and " +
          "changes nothing.",
        params: SubscriberIdParams,
        querystring: Type.Object({ includeInactiveChannels: Type.Optional(Type.Boolean()) }),
        response: {
          200: described(
            Type.Object({ data: Type.Array(WorkflowPreference) }, { additionalProperties: false }),
            "One entry per active workflow, oldest workflow first",
          ),
          ...errorResponsesOf({
            400: "The subscriberId is over 128 characters or has control characters",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: await listWorkflowPreferences(depsOf(app), request.tenant, request.params.subscriberId),
    }),
  );
};
