import type { RoutePlugin } from "../http/types.ts";
import { getCurrentEnvironmentRoute } from "./get-current-environment.ts";
import { listApiKeysRoute } from "./list-api-keys.ts";
import { listEnvironmentsRoute } from "./list-environments.ts";
import { regenerateApiKeyRoute } from "./regenerate-api-key.ts";
import { updateCurrentEnvironmentRoute } from "./update-current-environment.ts";

export const environmentRoutes: RoutePlugin = async (app) => {
  await app.register(getCurrentEnvironmentRoute);
  await app.register(updateCurrentEnvironmentRoute);
  await app.register(listEnvironmentsRoute);
  await app.register(listApiKeysRoute);
  await app.register(regenerateApiKeyRoute);
};
