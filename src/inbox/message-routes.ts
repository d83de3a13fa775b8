import { presentMessage } from "../engine/presenter.ts";
import { deleteMessage, deleteTransactionMessages, listMessages } from "../engine/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { Deleted, ListMessagesQuery, MessagePage, MessageParams, TransactionParams } from "./schemas.ts";

const deleted = { data: { acknowledged: true as const, status: "deleted" as const } };

/** The environment's messages, every channel (ENGINE.md part 5). */
export const messageRoutes: RoutePlugin = async (app) => {
  app.get(
    "/messages",
    {
      schema: {
        operationId: "listMessages",
        tags: ["Messages"],
        summary: "The environment's messages, newest first",
        querystring: ListMessagesQuery,
        response: {
          200: described(MessagePage, "One page of messages"),
          ...errorResponsesOf({ 400: "A query value out of range" }),
        },
      },
    },
    async (request) => {
      const { channel, subscriberId, transactionId, page, limit } = request.query;
      const result = await listMessages(depsOf(app), request.tenant, {
        ...(channel ? { channel } : {}),
        ...(subscriberId !== undefined ? { subscriberId } : {}),
        ...(transactionId !== undefined ? { transactionIds: [transactionId].flat() } : {}),
        ...(page !== undefined ? { page } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      return { ...result, data: result.data.map((m) => presentMessage(m)) };
    },
  );

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
      return deleted;
    },
  );

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
      return deleted;
    },
  );
};
