import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { presentIntegration } from "./presenter.ts";
import { IntegrationList } from "./schemas.ts";
import { type IntegrationTools, listIntegrations } from "./service.ts";

export const listActiveIntegrationsRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (
  app,
  { tools },
) => {
  app.get(
    "/integrations/active",
    {
      schema: {
        operationId: "listActiveIntegrations",
        tags: ["Integrations"],
        summary: "List the environment's active integrations, oldest first",
        response: {
          200: described(IntegrationList, "The active integrations, secrets masked"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: (await listIntegrations(depsOf(app), request.tenant, tools, { active: true })).map(
        presentIntegration,
      ),
    }),
  );
};
