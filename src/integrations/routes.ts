import type { RoutePluginWith } from "../http/types.ts";
import { createIntegrationRoute } from "./create-integration.ts";
import { deleteIntegrationRoute } from "./delete-integration.ts";
import { getChannelLimitRoute } from "./get-channel-limit.ts";
import { getInAppStatusRoute } from "./get-in-app-status.ts";
import { getWebhookProviderStatusRoute } from "./get-webhook-provider-status.ts";
import { listActiveIntegrationsRoute } from "./list-active-integrations.ts";
import { listIntegrationsRoute } from "./list-integrations.ts";
import { sendTestEmailRoute } from "./send-test-email.ts";
import type { IntegrationTools } from "./service.ts";
import { setPrimaryIntegrationRoute } from "./set-primary-integration.ts";
import { updateIntegrationRoute } from "./update-integration.ts";

/** `tools`: the process's key and SMTP pools (see IntegrationTools). */
export const integrationRoutes: RoutePluginWith<{ tools: IntegrationTools }> = async (app, { tools }) => {
  await app.register(createIntegrationRoute, { tools });
  await app.register(listIntegrationsRoute, { tools });
  await app.register(listActiveIntegrationsRoute, { tools });
  await app.register(updateIntegrationRoute, { tools });
  await app.register(deleteIntegrationRoute, { tools });
  await app.register(setPrimaryIntegrationRoute, { tools });
  await app.register(getWebhookProviderStatusRoute, { tools });
  await app.register(getInAppStatusRoute);
  await app.register(getChannelLimitRoute);
  await app.register(sendTestEmailRoute, { tools });
};
