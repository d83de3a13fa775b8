import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { ProviderIdParams } from "./schemas.ts";
import { type IntegrationTools, webhookProviderStatus } from "./service.ts";

export const getWebhookProviderStatusRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (
  app,
  { tools },
) => {
  app.get(
    "/integrations/webhook/provider/:providerId/status",
    {
      schema: {
        operationId: "getWebhookProviderStatus",
        tags: ["Integrations"],
        summary: "Whether the provider's delivery-status webhooks are set up",
        description: "Always false for now: no provider reports delivery status to Tidings yet.",
        params: ProviderIdParams,
        response: {
          200: described(
            Type.Object({ data: Type.Boolean() }, { additionalProperties: false }),
            "Whether delivery-status webhooks are set up",
          ),
          ...errorResponsesOf({
            400: "The provider id is malformed",
            404: "The environment has no integration of this provider",
          }),
        },
      },
    },
    async (request) => ({
      data: await webhookProviderStatus(depsOf(app), request.tenant, request.params.providerId, tools),
    }),
  );
};
