import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentMessage } from "./presenter.ts";
import { ActionBody, ActionParams, Message } from "./schemas.ts";
import { updateMessageAction } from "./service.ts";

export const updateMessageActionRoute: RoutePlugin = async (app) => {
  app.post(
    "/subscribers/:subscriberId/messages/:messageId/actions/:type",
    {
      schema: {
        operationId: "updateMessageAction",
        tags: ["Inbox"],
        summary: "Record a subscriber's action on a message (a button of the inbox)",
        params: ActionParams,
        body: ActionBody,
        response: {
          201: described(Envelope(Message), "The message"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such subscriber or message" }),
        },
      },
    },
    async (request, reply) => {
      const message = await updateMessageAction(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        request.params.messageId,
        {
          type: request.params.type,
          status: request.body.status,
          ...(request.body.payload ? { payload: request.body.payload } : {}),
        },
      );
      return reply.code(201).send({ data: presentMessage(message) });
    },
  );
};
