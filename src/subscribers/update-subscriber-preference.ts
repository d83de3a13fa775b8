import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { PreferenceParams, UpdatePreferenceBody, WorkflowPreference } from "./schemas.ts";
import { updateWorkflowPreference } from "./service.ts";

export const updateSubscriberPreferenceRoute: RoutePlugin = async (app) => {
  app.patch(
    "/subscribers/:subscriberId/preferences/:workflowId",
    {
      schema: {
        operationId: "updateSubscriberPreference",
        tags: ["Subscribers"],
        summary: "Change a subscriber's preference for one workflow",
        description:
          "`enabled` turns the whole workflow on or off for the subscriber; `channel: {type, enabled}` one of its " +
          "channels. A critical workflow cannot be turned off (400). `workflowId` is the workflow's `_id` or its " +
          "trigger identifier.",
        headers: IdempotencyKeyHeaders,
        params: PreferenceParams,
        body: UpdatePreferenceBody,
        response: {
          200: replayable(
            described(Envelope(WorkflowPreference), "The workflow and the effective preference"),
          ),
          ...errorResponsesOf({
            400: "Neither enabled nor channel sent, a channel type outside email, sms, in_app, chat, push, or turning a critical workflow off",
            404: "No such subscriber or workflow in the environment",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: await updateWorkflowPreference(
          depsOf(app, db),
          request.tenant,
          request.params.subscriberId,
          request.params.workflowId,
          request.body,
        ),
      })),
  );
};
