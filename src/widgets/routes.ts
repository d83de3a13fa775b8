import type { RoutePluginWith } from "../http/types.ts";
import { sessionCheck } from "../inbox/index.ts";
import { deleteMessagesRoute } from "./delete-messages.ts";
import { getCountsRoute } from "./get-counts.ts";
import { getFeedRoute } from "./get-feed.ts";
import { getOrganizationRoute } from "./get-organization.ts";
import { initializeSessionRoute } from "./initialize-session.ts";
import { logUsageRoute } from "./log-usage.ts";
import { markAllMessagesRoute } from "./mark-all-messages.ts";
import { markMessagesRoute } from "./mark-messages.ts";
import type { WidgetRouteOptions } from "./options.ts";
import { preferencesRoute } from "./preferences.ts";
import { updateMessageActionRoute } from "./update-message-action.ts";

export type { WidgetRouteOptions } from "./options.ts";
export { InboxRealtime, type RealtimeCluster } from "./realtime.ts";

/**
 * Novu's inbox widget protocol (docs/engine.md, "The inbox widget in real time"), under /v1/widgets: a session is started with the
 * environment's public identifier (and an HMAC when the environment asks for one); every other route
 * takes the session's token (`Authorization: Bearer`) and acts for its subscriber alone.
 */
export const widgetRoutes: RoutePluginWith<WidgetRouteOptions> = async (app, given) => {
  // Without the plugin's own registration options (its prefix), which the routes must not take again.
  const options: WidgetRouteOptions = {
    tools: given.tools,
    onChange: given.onChange,
    onUsage: given.onUsage,
  };
  app.addHook("onRoute", (route) => {
    route.schema = { ...route.schema, security: route.schema?.security ?? [{ WidgetSession: [] }] };
  });
  await app.register(initializeSessionRoute, options);
  await app.register(async (session) => {
    session.addHook("onRequest", sessionCheck(app, options.tools));
    await session.register(getFeedRoute);
    await session.register(getCountsRoute);
    await session.register(markMessagesRoute, options);
    await session.register(markAllMessagesRoute, options);
    await session.register(deleteMessagesRoute, options);
    await session.register(updateMessageActionRoute);
    await session.register(getOrganizationRoute);
    await session.register(preferencesRoute);
    await session.register(logUsageRoute, options);
  });
};
