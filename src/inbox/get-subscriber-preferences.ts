import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import { listInboxPreferences } from "../subscribers/service.ts";
import { presentSubscriberPreferences } from "./preference-presenter.ts";
import { SubscriberPreferencesQuery, SubscriberPreferencesV2 } from "./preference-schemas.ts";

export const getSubscriberPreferencesRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/preferences",
    {
      schema: {
        operationId: "getSubscriberPreferencesV2",
        tags: ["Subscribers"],
        summary: "A subscriber's global preference and its preference for each active workflow",
        description:
          "Novu's /v2 read (@novu/api's `subscribers.preferences.list`): the preferences the inbox and the /v1 " +
          "routes read, each with the channels it can turn off (those its workflows use), the global one with " +
          "its schedule when one is set. `criticality`: `nonCritical` (the default), `critical` or `all`.",
        params: SubscriberIdParams,
        querystring: SubscriberPreferencesQuery,
        response: {
          200: described(Envelope(SubscriberPreferencesV2), "The global preference and the workflows'"),
          ...errorResponsesOf({ 400: "A criticality that is not one", 404: "No such subscriber" }),
        },
      },
    },
    async (request) => ({
      data: presentSubscriberPreferences(
        await listInboxPreferences(depsOf(app), request.tenant, request.params.subscriberId, {
          criticality: request.query.criticality,
        }),
      ),
    }),
  );
};
