import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { Deleted, deletedBody, TransactionMessagesQuery, TransactionParams } from "./schemas.ts";
import { announceInboxChanges, deleteTransactionMessages } from "./service.ts";

export const deleteTransactionMessagesRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.delete(
    "/messages/transaction/:transactionId",
    {
      schema: {
        operationId: "deleteMessagesByTransaction",
        tags: ["Messages"],
        summary: "Delete every message of a trigger, or those of one channel",
        params: TransactionParams,
        querystring: TransactionMessagesQuery,
        response: {
          200: described(Deleted, "Deleted"),
          ...errorResponsesOf({
            400: "Invalid transactionId",
            404: "No messages of that transaction (and channel)",
          }),
        },
      },
    },
    async (request) => {
      const deleted = await deleteTransactionMessages(
        depsOf(app),
        request.tenant,
        request.params.transactionId,
        request.query.channel,
      );
      announceInboxChanges(options.onChange, deleted);
      return deletedBody;
    },
  );
};
