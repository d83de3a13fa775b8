import { badRequest } from "../errors.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { updateMessageAction } from "../inbox/service.ts";
import { presentWidgetMessage } from "./presenter.ts";
import { WidgetActionBody, WidgetActionParams, WidgetMessage } from "./schemas.ts";

export const updateMessageActionRoute: RoutePlugin = async (app) => {
  app.post(
    "/messages/:messageId/actions/:type",
    {
      schema: {
        operationId: "updateWidgetMessageAction",
        tags: ["Widget"],
        summary: "Record the subscriber's action on a message (a button of the inbox)",
        params: WidgetActionParams,
        body: WidgetActionBody,
        response: {
          201: described(Envelope(WidgetMessage), "The message"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such message of this subscriber" }),
        },
      },
    },
    async (request, reply) => {
      const { type, messageId } = request.params;
      const { executedType, status, payload } = request.body;
      if (executedType !== undefined && executedType !== type) {
        throw badRequest(`executedType "${executedType}" differs from the path's action type "${type}"`);
      }
      const { subscriber } = request.subscriberSession;
      const message = await updateMessageAction(
        depsOf(app),
        request.tenant,
        subscriber.subscriberId,
        messageId,
        {
          type,
          status,
          ...(payload ? { payload } : {}),
        },
      );
      return reply.code(201).send({ data: presentWidgetMessage(message, subscriber) });
    },
  );
};
