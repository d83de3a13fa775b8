import { presentMessage } from "../engine/presenter.ts";
import {
  changesFor,
  countSubscriberMessages,
  markAllSubscriberMessages,
  markSubscriberMessages,
  subscriberFeed,
  updateMessageAction,
} from "../engine/service.ts";
import { badRequest } from "../errors.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import {
  ActionBody,
  ActionParams,
  CountResponse,
  FeedQuery,
  LegacyMarkBody,
  MarkAllBody,
  MarkAllResponse,
  MarkAsBody,
  Message,
  MessagePage,
  MessagesResponse,
  SubscriberIdParams,
  UnseenQuery,
} from "./schemas.ts";

/** `payload` of the feed: base64 of a JSON object, or a 400 naming the field. */
export function decodePayloadFilter(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || value === "") return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(value, "base64").toString("utf8")) as unknown;
    if (decoded !== null && typeof decoded === "object" && !Array.isArray(decoded))
      return decoded as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw badRequest("payload must be base64 of a JSON object", [
    { field: "payload", message: "must be base64 of a JSON object" },
  ]);
}

const ids = (value: string | string[]) => [value].flat();

/** The subscriber's in-app feed and what the API key side of Novu's inbox does with it (ENGINE.md part 5). */
export const feedRoutes: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/notifications/feed",
    {
      schema: {
        operationId: "getSubscriberFeed",
        tags: ["Inbox"],
        summary: "A subscriber's in-app messages, newest first",
        params: SubscriberIdParams,
        querystring: FeedQuery,
        response: {
          200: described(MessagePage, "One page of the feed"),
          ...errorResponsesOf({
            400: "A query value out of range, or payload not base64 JSON",
            404: "No such subscriber",
          }),
        },
      },
    },
    async (request) => {
      const { page, limit, seen, read, payload } = request.query;
      const feed = await subscriberFeed(depsOf(app), request.tenant, request.params.subscriberId, {
        ...(page !== undefined ? { page } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(seen !== undefined ? { seen } : {}),
        ...(read !== undefined ? { read } : {}),
        ...(payload !== undefined ? { payload: decodePayloadFilter(payload) ?? {} } : {}),
      });
      return { ...feed, data: feed.data.map((m) => presentMessage(m, feed.subscriber)) };
    },
  );

  app.get(
    "/subscribers/:subscriberId/notifications/unseen",
    {
      schema: {
        operationId: "getSubscriberUnseenCount",
        tags: ["Inbox"],
        summary: "How many of a subscriber's in-app messages are unseen",
        params: SubscriberIdParams,
        querystring: UnseenQuery,
        response: {
          200: described(CountResponse, "The count"),
          ...errorResponsesOf({ 400: "Invalid query", 404: "No such subscriber" }),
        },
      },
    },
    async (request) => ({
      data: {
        count: await countSubscriberMessages(depsOf(app), request.tenant, request.params.subscriberId, {
          seen: request.query.seen ?? false,
        }),
      },
    }),
  );

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
        ids(request.body.messageId),
        changesFor(request.body.markAs),
      );
      return reply.code(201).send({ data: messages.map((m) => presentMessage(m, subscriber)) });
    },
  );

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
        ids(request.body.messageId),
        {
          ...(mark.seen !== undefined ? { seen: mark.seen } : {}),
          ...(mark.read !== undefined ? { read: mark.read } : {}),
        },
      );
      return reply.code(201).send({ data: messages.map((m) => presentMessage(m, subscriber)) });
    },
  );

  app.post(
    "/subscribers/:subscriberId/messages/mark-all",
    {
      schema: {
        operationId: "markAllSubscriberMessages",
        tags: ["Inbox"],
        summary: "Mark all of a subscriber's in-app messages read or seen",
        params: SubscriberIdParams,
        body: MarkAllBody,
        response: {
          201: described(MarkAllResponse, "How many changed"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such subscriber" }),
        },
      },
    },
    async (request, reply) => {
      const { count } = await markAllSubscriberMessages(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        request.body.markAs,
      );
      return reply.code(201).send({ data: count });
    },
  );

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
