import { sendError } from "../http/error-handler.ts";
import type { RoutePluginWith } from "../http/types.ts";
import { bulkNotificationsRoute } from "./bulk-notifications.ts";
import { bulkSubscriberNotificationsRoute } from "./bulk-subscriber-notifications.ts";
import { bulkUpdateSubscriberPreferencesRoute } from "./bulk-update-subscriber-preferences.ts";
import { countNotificationsRoute } from "./count-notifications.ts";
import { countSubscriberNotificationsRoute } from "./count-subscriber-notifications.ts";
import { createSessionRoute } from "./create-session.ts";
import { deleteMessageRoute } from "./delete-message.ts";
import { deleteNotificationRoute } from "./delete-notification.ts";
import { deleteSubscriberNotificationRoute } from "./delete-subscriber-notification.ts";
import { deleteTransactionMessagesRoute } from "./delete-transaction-messages.ts";
import { getSubscriberFeedRoute } from "./get-subscriber-feed.ts";
import { getSubscriberPreferencesRoute } from "./get-subscriber-preferences.ts";
import { getUnseenCountRoute } from "./get-unseen-count.ts";
import { listMessagesRoute } from "./list-messages.ts";
import { listNotificationsRoute } from "./list-notifications.ts";
import { listSubscriberNotificationsRoute } from "./list-subscriber-notifications.ts";
import { markAllMessagesRoute } from "./mark-all-messages.ts";
import { markMessagesRoute } from "./mark-messages.ts";
import { markMessagesLegacyRoute } from "./mark-messages-legacy.ts";
import { markNotificationRoute } from "./mark-notification.ts";
import { markSubscriberNotificationRoute } from "./mark-subscriber-notification.ts";
import { notificationActionRoute } from "./notification-action.ts";
import type { InboxRouteOptions, InboxSessionRouteOptions, SnoozingRouteOptions } from "./options.ts";
import { inboxPreferencesRoute } from "./preferences.ts";
import { sessionCheck, subscriberGoneFirst } from "./session-check.ts";
import { snoozeNotificationRoute } from "./snooze-notification.ts";
import { snoozeSubscriberNotificationRoute } from "./snooze-subscriber-notification.ts";
import { subscriberNotificationActionRoute } from "./subscriber-notification-action.ts";
import { topicSubscriptionsRoute } from "./topic-subscriptions.ts";
import { updateMessageActionRoute } from "./update-message-action.ts";
import { updateSubscriberPreferencesRoute } from "./update-subscriber-preferences.ts";

/**
 * The subscriber's in-app feed and what the API key side of Novu's inbox does with it, and the
 * environment's messages, every channel (docs/engine.md, "Reading what happened").
 */
export const inboxRoutes: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  await app.register(getSubscriberFeedRoute);
  await app.register(getUnseenCountRoute);
  await app.register(markMessagesRoute, options);
  await app.register(markMessagesLegacyRoute, options);
  await app.register(markAllMessagesRoute, options);
  await app.register(updateMessageActionRoute);
  await app.register(listMessagesRoute);
  await app.register(deleteMessageRoute, options);
  await app.register(deleteTransactionMessagesRoute, options);
};

/**
 * The API key's mirror of Novu's current inbox, under /v2 as @novu/api 3 calls it (docs/engine.md,
 * "The inbox"): the session's routes over notifications and preferences, for the subscriber the
 * path names.
 */
export const subscriberNotificationRoutes: RoutePluginWith<SnoozingRouteOptions> = async (app, given) => {
  // Without the plugin's own registration options (its prefix), which the routes must not take again.
  const options: SnoozingRouteOptions = {
    onChange: given.onChange,
    maxSnoozeDurationHours: given.maxSnoozeDurationHours,
  };
  await app.register(listSubscriberNotificationsRoute);
  await app.register(countSubscriberNotificationsRoute);
  await app.register(markSubscriberNotificationRoute, options);
  await app.register(snoozeSubscriberNotificationRoute, options);
  await app.register(subscriberNotificationActionRoute, options);
  await app.register(deleteSubscriberNotificationRoute, options);
  await app.register(bulkSubscriberNotificationsRoute, options);
  // The preferences the inbox reads and changes, for the subscriber named.
  await app.register(getSubscriberPreferencesRoute);
  await app.register(updateSubscriberPreferencesRoute);
  await app.register(bulkUpdateSubscriberPreferencesRoute);
};

/**
 * Novu's current inbox (@novu/js, @novu/react), under /v1/inbox (docs/engine.md, "The inbox"): a
 * session is started with the environment's public identifier (and an HMAC when the environment asks
 * for one); every other route takes the session's token (`Authorization: Bearer`) and acts for its
 * subscriber alone.
 */
export const inboxSessionRoutes: RoutePluginWith<InboxSessionRouteOptions> = async (app, given) => {
  // Without the plugin's own registration options (its prefix), which the routes must not take again.
  const options: InboxSessionRouteOptions = {
    tools: given.tools,
    onChange: given.onChange,
    maxSnoozeDurationHours: given.maxSnoozeDurationHours,
  };
  app.addHook("onRoute", (route) => {
    route.schema = { ...route.schema, security: route.schema?.security ?? [{ SubscriberSession: [] }] };
  });
  await app.register(createSessionRoute, options);
  // Every route a session calls is registered in this scope, behind the session check: it sets
  // request.tenant and request.subscriberSession (src/inbox/session-check.ts).
  await app.register(async (session) => {
    session.addHook("onRequest", sessionCheck(app, options.tools));
    // A route that reads its subscriber alongside its work may fail before awaiting it (its query
    // string refused, say): a session whose subscriber is gone is a 401 all the same, first.
    session.setErrorHandler(async (error, request, reply) =>
      sendError(request, reply, await subscriberGoneFirst(request, error as Error)),
    );
    await session.register(listNotificationsRoute);
    await session.register(countNotificationsRoute);
    await session.register(markNotificationRoute, options);
    await session.register(snoozeNotificationRoute, options);
    await session.register(notificationActionRoute);
    await session.register(deleteNotificationRoute, options);
    await session.register(bulkNotificationsRoute, options);
    await session.register(inboxPreferencesRoute);
    await session.register(topicSubscriptionsRoute);
  });
};
