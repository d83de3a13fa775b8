import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { presentIntegration } from "./presenter.ts";
import { IntegrationList } from "./schemas.ts";
import { type IntegrationTools, listIntegrations } from "./service.ts";

export const listIntegrationsRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (app, { tools }) => {
  app.get(
    "/integrations",
    {
      schema: {
        operationId: "listIntegrations",
        tags: ["Integrations"],
        summary: "List the environment's integrations, oldest first",
        response: {
          200: described(IntegrationList, "Every integration, secrets masked"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: (await listIntegrations(depsOf(app), request.tenant, tools)).map(presentIntegration),
    }),
  );
};
