import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import {
  GlobalPreference,
  PreferenceLevelParams,
  UpdatePreferenceBody,
  WorkflowPreference,
} from "../subscribers/schemas.ts";
import {
  getPreferencesByLevel,
  listWorkflowPreferences,
  updateGlobalPreference,
  updateWorkflowPreference,
} from "../subscribers/service.ts";
import { WidgetGlobalPreferenceBody, WidgetPreferenceParams } from "./schemas.ts";

/** The subscriber's preferences, read and changed from its inbox: the same rules as the API key's routes. */
export const preferencesRoute: RoutePlugin = async (app) => {
  app.get(
    "/preferences",
    {
      schema: {
        operationId: "getWidgetPreferences",
        tags: ["Widget"],
        summary: "The subscriber's preference for each active workflow",
        response: {
          200: described(
            Type.Object({ data: Type.Array(WorkflowPreference) }, { additionalProperties: false }),
            "One entry per active workflow",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: await listWorkflowPreferences(
        depsOf(app),
        request.tenant,
        request.subscriberSession.subscriber.subscriberId,
      ),
    }),
  );
  app.get(
    "/preferences/:level",
    {
      schema: {
        operationId: "getWidgetPreferencesByLevel",
        tags: ["Widget"],
        summary: "The subscriber's global preference, or its workflows' (`template`)",
        params: Type.Object({ level: PreferenceLevelParams.properties.level }),
        response: {
          200: described(
            Type.Object(
              { data: Type.Array(Type.Union([GlobalPreference, WorkflowPreference])) },
              { additionalProperties: false },
            ),
            "The preferences at that level",
          ),
          ...errorResponsesOf({ 400: "level is neither global nor template" }),
        },
      },
    },
    async (request) => ({
      data: await getPreferencesByLevel(
        depsOf(app),
        request.tenant,
        request.subscriberSession.subscriber.subscriberId,
        request.params.level,
      ),
    }),
  );
  app.patch(
    "/preferences",
    {
      schema: {
        operationId: "updateWidgetGlobalPreference",
        tags: ["Widget"],
        summary: "Change the subscriber's global preference",
        body: WidgetGlobalPreferenceBody,
        response: {
          200: described(Envelope(GlobalPreference), "The global preference after the change"),
          ...errorResponsesOf({ 400: "Invalid body, or nothing to change" }),
        },
      },
    },
    async (request) => {
      const { enabled, preferences } = request.body;
      return {
        data: await updateGlobalPreference(
          depsOf(app),
          request.tenant,
          request.subscriberSession.subscriber.subscriberId,
          {
            ...(enabled !== undefined ? { enabled } : {}),
            ...(preferences !== undefined
              ? { preferences: preferences.map(({ type, enabled: on }) => ({ type, enabled: on })) }
              : {}),
          },
        ),
      };
    },
  );
  app.patch(
    "/preferences/:templateId",
    {
      schema: {
        operationId: "updateWidgetWorkflowPreference",
        tags: ["Widget"],
        summary: "Change the subscriber's preference for one workflow",
        params: WidgetPreferenceParams,
        body: UpdatePreferenceBody,
        response: {
          200: described(Envelope(WorkflowPreference), "The workflow and the effective preference"),
          ...errorResponsesOf({ 400: "Invalid body, or nothing to change", 404: "No such workflow" }),
        },
      },
    },
    async (request) => ({
      data: await updateWorkflowPreference(
        depsOf(app),
        request.tenant,
        request.subscriberSession.subscriber.subscriberId,
        request.params.templateId,
        request.body,
      ),
    }),
  );
};
