import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { TransactionMessagesQuery, TransactionParams } from "./schemas.ts";
import { announceInboxChanges, deleteTransactionMessages } from "./service.ts";

export const deleteTransactionMessagesRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.delete(
    "/messages/transaction/:transactionId",
    {
      schema: {
        operationId: "deleteMessagesByTransaction",
        tags: ["Messages"],
        summary: "Delete every message of a trigger (of one channel, with `channel`)",
        description: "204, as Novu answers it (what @novu/api's `messages.deleteByTransactionId` reads).",
        params: TransactionParams,
        querystring: TransactionMessagesQuery,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({ 400: "Invalid transactionId", 404: "No messages of that transaction" }),
        },
      },
    },
    async (request, reply) => {
      const deleted = await deleteTransactionMessages(
        depsOf(app),
        request.tenant,
        request.params.transactionId,
        request.query.channel,
      );
      announceInboxChanges(options.onChange, deleted);
      return reply.code(204).send(null);
    },
  );
};
