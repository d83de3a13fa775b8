import type { RoutePluginWith } from "../http/types.ts";
import { deleteMessageRoute } from "./delete-message.ts";
import { deleteTransactionMessagesRoute } from "./delete-transaction-messages.ts";
import { getSubscriberFeedRoute } from "./get-subscriber-feed.ts";
import { getUnseenCountRoute } from "./get-unseen-count.ts";
import { listMessagesRoute } from "./list-messages.ts";
import { markAllMessagesRoute } from "./mark-all-messages.ts";
import { markMessagesRoute } from "./mark-messages.ts";
import { markMessagesLegacyRoute } from "./mark-messages-legacy.ts";
import type { InboxRouteOptions } from "./options.ts";
import { updateMessageActionRoute } from "./update-message-action.ts";

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
