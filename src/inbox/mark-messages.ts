import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxRouteOptions } from "./options.ts";
import { presentMessage } from "./presenter.ts";
import { MarkAsBody, MessagesResponse, SubscriberIdParams } from "./schemas.ts";
import { changesFor, markSubscriberMessages } from "./service.ts";

export const markMessagesRoute: RoutePluginWith<InboxRouteOptions> = async (app, options) => {
  app.post(
    "/subscribers/:subscriberId/messages/mark-as",
    {
      schema: {
        operationId: "markSubscriberMessagesAs",
        tags: ["Inbox"],
        summary: "Mark messages read, seen, unread or unseen",
        params: SubscriberIdParams,
        body: MarkAsBody,
        response: {
          201: described(MessagesResponse, "The messages as changed"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such subscriber" }),
        },
      },
    },
    async (request, reply) => {
      const { messages, subscriber } = await markSubscriberMessages(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        [request.body.messageId].flat(),
        changesFor(request.body.markAs),
      );
      options.onChange?.({ environmentId: request.tenant.environmentId, subscriberRef: subscriber.id });
      return reply.code(201).send({ data: messages.map((m) => presentMessage(m, subscriber)) });
    },
  );
};
