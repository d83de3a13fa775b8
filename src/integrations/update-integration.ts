import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { presentIntegration } from "./presenter.ts";
import { IntegrationIdParams, IntegrationResource, UpdateIntegrationBody } from "./schemas.ts";
import { type IntegrationTools, updateIntegration } from "./service.ts";

export const updateIntegrationRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (
  app,
  { tools },
) => {
  app.put(
    "/integrations/:integrationId",
    {
      schema: {
        operationId: "updateIntegration",
        tags: ["Integrations"],
        summary: "Update an integration (the fields sent; the others keep their values)",
        description:
          "Sent `credentials` replace the stored ones; a secret sent back as `********` (its mask) keeps its " +
          "stored value, unless the update changes where or how the provider is reached (host, port, user, " +
          "TLS settings): then each stored secret must be sent again (400 naming it), so that a secret only " +
          "goes to the server it was given for. The next message goes through the new settings.",
        params: IntegrationIdParams,
        body: UpdateIntegrationBody,
        response: {
          200: described(Envelope(IntegrationResource), "The integration as stored after the update"),
          ...errorResponsesOf({
            400:
              "Invalid body or id, missing SMTP settings for an active integration, a stored secret masked or left " +
              "out while the host, port, user or TLS settings change, or a failed check",
            404: "No such integration in the environment",
            409: "Another integration of the environment has the identifier",
          }),
        },
      },
    },
    async (request) => ({
      data: presentIntegration(
        await updateIntegration(
          depsOf(app),
          request.tenant,
          request.params.integrationId,
          request.body,
          tools,
        ),
      ),
    }),
  );
};
