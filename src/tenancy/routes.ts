import type { RoutePluginWith } from "../http/types.ts";
import type { KeySealer } from "./domain.ts";
import { getCurrentEnvironmentRoute } from "./get-current-environment.ts";
import { getMxRecordStatusRoute } from "./get-mx-record-status.ts";
import { listApiKeysRoute } from "./list-api-keys.ts";
import { listEnvironmentsRoute } from "./list-environments.ts";
import { regenerateApiKeyRoute } from "./regenerate-api-key.ts";
import { updateCurrentEnvironmentRoute } from "./update-current-environment.ts";

/** `sealer` keeps regenerated keys, encrypted, for the inbox widget's HMAC (undefined: not kept). */
export const environmentRoutes: RoutePluginWith<{ sealer?: KeySealer | undefined }> = async (
  app,
  options,
) => {
  await app.register(getCurrentEnvironmentRoute);
  await app.register(updateCurrentEnvironmentRoute);
  await app.register(listEnvironmentsRoute);
  await app.register(listApiKeysRoute);
  await app.register(regenerateApiKeyRoute, { sealer: options.sealer });
  await app.register(getMxRecordStatusRoute);
};
