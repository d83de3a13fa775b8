import type { RoutePlugin } from "../http/types.ts";
import { feedRoutes } from "./feed-routes.ts";
import { messageRoutes } from "./message-routes.ts";

export const inboxRoutes: RoutePlugin = async (app) => {
  await app.register(feedRoutes);
  await app.register(messageRoutes);
};
