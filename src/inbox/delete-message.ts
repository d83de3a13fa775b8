import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { Deleted, deletedBody, MessageParams } from "./schemas.ts";
import { announceInboxChanges, deleteMessage } from "./service.ts";

export const deleteMessageRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.delete(
    "/messages/:messageId",
    {
      schema: {
        operationId: "deleteMessage",
        tags: ["Messages"],
        summary: "Delete a message",
        params: MessageParams,
        response: {
          200: described(Deleted, "Deleted"),
          ...errorResponsesOf({ 400: "Not an id", 404: "No such message" }),
        },
      },
    },
    async (request) => {
      const deleted = await deleteMessage(depsOf(app), request.tenant, request.params.messageId);
      announceInboxChanges(options.onChange, [deleted]);
      return deletedBody;
    },
  );
};
