import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentMessage } from "./presenter.ts";
import { ListMessagesQuery, MessagePage } from "./schemas.ts";
import { listMessages } from "./service.ts";

export const listMessagesRoute: RoutePlugin = async (app) => {
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
};
