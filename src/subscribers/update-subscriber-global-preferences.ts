import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { GlobalPreference, SubscriberIdParams, UpdateGlobalPreferenceBody } from "./schemas.ts";
import { updateGlobalPreference } from "./service.ts";

export const updateSubscriberGlobalPreferencesRoute: RoutePlugin = async (app) => {
  app.patch(
    "/subscribers/:subscriberId/preferences",
    {
      schema: {
        operationId: "updateSubscriberGlobalPreferences",
        tags: ["Subscribers"],
        summary: "Change a subscriber's global preference",
        description:
          "`enabled: false` stops every notification to the subscriber except critical workflows'; " +
          "`preferences: [{type, enabled}]` turns channels off (or back on) across all workflows.",
        headers: IdempotencyKeyHeaders,
        params: SubscriberIdParams,
        body: UpdateGlobalPreferenceBody,
        response: {
          200: replayable(described(Envelope(GlobalPreference), "The global preference after the change")),
          ...errorResponsesOf({
            400: "A channel type outside email, sms, in_app, chat, push, or a value that is not a boolean",
            404: "No such subscriber in the environment",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: await updateGlobalPreference(
          depsOf(app, db),
          request.tenant,
          request.params.subscriberId,
          request.body,
        ),
      })),
  );
};
