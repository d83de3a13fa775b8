import { deleteMessage } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { Deleted, deletedBody, MessageParams } from "./schemas.ts";

export const deleteMessageRoute: RoutePlugin = async (app) => {
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
      await deleteMessage(depsOf(app), request.tenant, request.params.messageId);
      return deletedBody;
    },
  );
};
