import { deleteTransactionMessages } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { Deleted, deletedBody, TransactionParams } from "./schemas.ts";

export const deleteTransactionMessagesRoute: RoutePlugin = async (app) => {
  app.delete(
    "/messages/transaction/:transactionId",
    {
      schema: {
        operationId: "deleteMessagesByTransaction",
        tags: ["Messages"],
        summary: "Delete every message of a trigger",
        params: TransactionParams,
        response: {
          200: described(Deleted, "Deleted"),
          ...errorResponsesOf({ 400: "Invalid transactionId", 404: "No messages of that transaction" }),
        },
      },
    },
    async (request) => {
      await deleteTransactionMessages(depsOf(app), request.tenant, request.params.transactionId);
      return deletedBody;
    },
  );
};
