import { badRequest } from "../errors.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { presentMessage } from "./presenter.ts";
import { LegacyMarkBody, MessagesResponse, SubscriberIdParams } from "./schemas.ts";
import { markSubscriberMessages } from "./service.ts";

export const markMessagesLegacyRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.post(
    "/subscribers/:subscriberId/messages/markAs",
    {
      schema: {
        operationId: "markSubscriberMessagesLegacy",
        tags: ["Inbox"],
        summary: "Mark messages seen or read (the older body @novu/node sends)",
        deprecated: true,
        params: SubscriberIdParams,
        body: LegacyMarkBody,
        response: {
          201: described(MessagesResponse, "The messages as changed"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such subscriber" }),
        },
      },
    },
    async (request, reply) => {
      const { mark } = request.body;
      if (mark.seen === undefined && mark.read === undefined) {
        throw badRequest("mark must set seen or read", [{ field: "mark", message: "must set seen or read" }]);
      }
      const { messages, subscriber } = await markSubscriberMessages(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        [request.body.messageId].flat(),
        {
          ...(mark.seen !== undefined ? { seen: mark.seen } : {}),
          ...(mark.read !== undefined ? { read: mark.read } : {}),
        },
      );
      options.onChange?.({ environmentId: request.tenant.environmentId, subscriberRef: subscriber.id });
      return reply.code(201).send({ data: messages.map((m) => presentMessage(m, subscriber)) });
    },
  );
};
