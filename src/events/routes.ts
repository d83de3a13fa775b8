import type { RoutePlugin } from "../http/types.ts";
import { broadcastEventRoute } from "./broadcast-event.ts";
import { bulkTriggerEventsRoute } from "./bulk-trigger-events.ts";
import { cancelTriggerRoute } from "./cancel-trigger.ts";
import { triggerEventRoute } from "./trigger-event.ts";

export const eventRoutes: RoutePlugin = async (app) => {
  await app.register(triggerEventRoute);
  await app.register(bulkTriggerEventsRoute);
  await app.register(broadcastEventRoute);
  await app.register(cancelTriggerRoute);
};
