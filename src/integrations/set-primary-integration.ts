import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { presentIntegration } from "./presenter.ts";
import { IntegrationIdParams, IntegrationResource } from "./schemas.ts";
import { type IntegrationTools, setPrimaryIntegration } from "./service.ts";

export const setPrimaryIntegrationRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (
  app,
  { tools },
) => {
  app.post(
    "/integrations/:integrationId/set-primary",
    {
      schema: {
        operationId: "setPrimaryIntegration",
        tags: ["Integrations"],
        summary: "Make an email integration the one its channel delivers through",
        description:
          "The integration becomes active and primary; the channel's other integrations stop being primary. " +
          "Without a primary, email goes through the newest active email integration. 200, as Novu's current " +
          "API answers (@novu/api's `integrations.setAsPrimary` takes no other status).",
        params: IntegrationIdParams,
        response: {
          200: described(Envelope(IntegrationResource), "The integration, now primary"),
          ...errorResponsesOf({
            400: "The id is malformed, or the integration is not an email integration",
            404: "No such integration in the environment",
          }),
        },
      },
    },
    async (request, reply) => {
      const integration = await setPrimaryIntegration(
        depsOf(app),
        request.tenant,
        request.params.integrationId,
        tools,
      );
      return reply.code(200).send({ data: presentIntegration(integration) });
    },
  );
};
