import { invalidField } from "../errors.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import {
  listInboxPreferences,
  updateInboxGlobalPreference,
  updateInboxWorkflowPreference,
} from "../subscribers/service.ts";
import { presentSubscriberPreferences } from "./preference-presenter.ts";
import { SubscriberPreferencesV2, UpdateSubscriberPreferencesBody } from "./preference-schemas.ts";

export const updateSubscriberPreferencesRoute: RoutePlugin = async (app) => {
  app.patch(
    "/subscribers/:subscriberId/preferences",
    {
      schema: {
        operationId: "updateSubscriberPreferencesV2",
        tags: ["Subscribers"],
        summary: "Change a subscriber's global preference (channels, schedule) or one workflow's",
        description:
          "Novu's /v2 change (@novu/api's `subscribers.preferences.update`): with `workflowId`, that workflow's " +
          "channels; without, the global channels and the weekly schedule (`isEnabled` always, the hours when " +
          "sent, as the inbox sets them). A critical workflow cannot be turned off. Answers every preference, as " +
          "the read does.",
        params: SubscriberIdParams,
        body: UpdateSubscriberPreferencesBody,
        response: {
          200: described(Envelope(SubscriberPreferencesV2), "The preferences after the change"),
          ...errorResponsesOf({
            400: "An invalid schedule, a schedule sent with a workflowId, or a critical workflow turned off",
            404: "No such subscriber, or no such live workflow in the environment",
          }),
        },
      },
    },
    async (request) => {
      const deps = depsOf(app);
      const { subscriberId } = request.params;
      const { workflowId, channels = {}, schedule } = request.body;
      if (workflowId !== undefined) {
        if (schedule !== undefined)
          throw invalidField("schedule", "belongs to the global preference: send it without workflowId");
        await updateInboxWorkflowPreference(deps, request.tenant, subscriberId, workflowId, { channels });
      } else {
        await updateInboxGlobalPreference(deps, request.tenant, subscriberId, { channels, schedule });
      }
      return {
        data: presentSubscriberPreferences(
          await listInboxPreferences(deps, request.tenant, subscriberId, {}),
        ),
      };
    },
  );
};
