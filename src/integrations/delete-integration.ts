import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { presentIntegration } from "./presenter.ts";
import { IntegrationIdParams, IntegrationList } from "./schemas.ts";
import { deleteIntegration, type IntegrationTools } from "./service.ts";

export const deleteIntegrationRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (
  app,
  { tools },
) => {
  app.delete(
    "/integrations/:integrationId",
    {
      schema: {
        operationId: "deleteIntegration",
        tags: ["Integrations"],
        summary: "Delete an integration",
        description:
          "Deleted for good, its credentials with it. Answers the remaining integrations, as Novu does.",
        params: IntegrationIdParams,
        response: {
          200: described(IntegrationList, "The environment's remaining integrations"),
          ...errorResponsesOf({
            400: "The id is not 24 lowercase hex characters",
            404: "No such integration in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: (await deleteIntegration(depsOf(app), request.tenant, request.params.integrationId, tools)).map(
        presentIntegration,
      ),
    }),
  );
};
