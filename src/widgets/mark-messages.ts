import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { changeOf } from "../inbox/index.ts";
import { LegacyMarkBody, MarkAsBody } from "../inbox/schemas.ts";
import { changesFor, markSubscriberMessages } from "../inbox/service.ts";
import type { WidgetRouteOptions } from "./options.ts";
import { presentWidgetMessage } from "./presenter.ts";
import { WidgetMessages } from "./schemas.ts";

/** Marks the subscriber's messages: `mark-as` ({messageId, markAs}) and the older `markAs` ({messageId, mark}). */
export const markMessagesRoute: RoutePluginWith<WidgetRouteOptions> = async (app, options) => {
  const responses = {
    201: described(
      WidgetMessages,
      "The messages as changed (ids of other subscribers' messages change nothing)",
    ),
    ...errorResponsesOf({ 400: "Invalid body" }),
  };
  const mark = async (
    request: Parameters<typeof changeOf>[0],
    messageId: string | string[],
    changes: { seen?: boolean; read?: boolean },
  ) => {
    const { subscriber } = request.subscriberSession;
    const { messages } = await markSubscriberMessages(
      depsOf(app),
      request.tenant,
      subscriber.subscriberId,
      [messageId].flat(),
      changes,
    );
    if (messages.length > 0) options.onChange?.(changeOf(request));
    return { data: messages.map((m) => presentWidgetMessage(m, subscriber)) };
  };
  app.post(
    "/messages/mark-as",
    {
      schema: {
        operationId: "markWidgetMessagesAs",
        tags: ["Widget"],
        summary: "Mark messages read, seen, unread or unseen",
        body: MarkAsBody,
        response: responses,
      },
    },
    async (request, reply) =>
      reply.code(201).send(await mark(request, request.body.messageId, changesFor(request.body.markAs))),
  );
  app.post(
    "/messages/markAs",
    {
      schema: {
        operationId: "markWidgetMessagesLegacy",
        tags: ["Widget"],
        summary: "Mark messages seen or read (the older body)",
        body: LegacyMarkBody,
        response: responses,
      },
    },
    async (request, reply) => {
      const sent = request.body.mark;
      // Nothing named: seen, as Novu's client sends it.
      const changes = sent.seen === undefined && sent.read === undefined ? { seen: true } : sent;
      return reply.code(201).send(await mark(request, request.body.messageId, changes));
    },
  );
};
