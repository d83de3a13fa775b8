import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { GlobalPreference, PreferenceLevelParams, WorkflowPreference } from "./schemas.ts";
import { getPreferencesByLevel } from "./service.ts";

export const getSubscriberPreferencesByLevelRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/preferences/:level",
    {
      schema: {
        operationId: "getSubscriberPreferencesByLevel",
        tags: ["Subscribers"],
        summary: "A subscriber's global preference, or its workflow preferences",
        description:
          "`global`: a one-entry list with the global preference (`enabled` and every channel). `template`: " +
          "the same list as `GET /v1/subscribers/{subscriberId}/preferences`.",
        params: PreferenceLevelParams,
        response: {
          200: described(
            Type.Object(
              { data: Type.Array(Type.Union([GlobalPreference, WorkflowPreference])) },
              { additionalProperties: false },
            ),
            "The preferences at that level",
          ),
          ...errorResponsesOf({
            400: "level is neither global nor template, or a malformed subscriberId",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: await getPreferencesByLevel(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        request.params.level,
      ),
    }),
  );
};
