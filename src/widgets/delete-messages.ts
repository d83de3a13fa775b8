import { notFound } from "../errors.ts";
import { getFeed } from "../feeds/service.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { changeOf } from "../inbox/index.ts";
import { Deleted, deletedBody } from "../inbox/schemas.ts";
import { deleteSubscriberMessages } from "../inbox/service.ts";
import type { WidgetRouteOptions } from "./options.ts";
import { BulkDeleteBody, WidgetDeleteAllQuery, WidgetMessageParams } from "./schemas.ts";

/** Deletes the subscriber's messages: one, several (`bulk/delete`), or all. */
export const deleteMessagesRoute: RoutePluginWith<WidgetRouteOptions> = async (app, options) => {
  const remove = async (request: Parameters<typeof changeOf>[0], ids?: string[], feedId?: string) => {
    const deleted = await deleteSubscriberMessages(
      depsOf(app),
      request.tenant,
      request.subscriberSession.subscriber.id,
      ids,
      feedId,
    );
    if (deleted.length > 0) options.onChange?.(changeOf(request));
    return deleted.length;
  };
  app.delete(
    "/messages/:messageId",
    {
      schema: {
        operationId: "deleteWidgetMessage",
        tags: ["Widget"],
        summary: "Delete one of the subscriber's messages",
        params: WidgetMessageParams,
        response: {
          200: described(Deleted, "Deleted"),
          ...errorResponsesOf({ 400: "Invalid message id", 404: "No such message of this subscriber" }),
        },
      },
    },
    async (request) => {
      if ((await remove(request, [request.params.messageId])) === 0) {
        throw notFound(`Message ${request.params.messageId} was not found`);
      }
      return deletedBody;
    },
  );
  app.post(
    "/messages/bulk/delete",
    {
      schema: {
        operationId: "deleteWidgetMessages",
        tags: ["Widget"],
        summary: "Delete several of the subscriber's messages (others' ids delete nothing)",
        body: BulkDeleteBody,
        response: { 200: described(Deleted, "Deleted"), ...errorResponsesOf({ 400: "Invalid body" }) },
      },
    },
    async (request) => {
      await remove(request, request.body.messageIds);
      return deletedBody;
    },
  );
  app.delete(
    "/messages",
    {
      schema: {
        operationId: "deleteAllWidgetMessages",
        tags: ["Widget"],
        summary:
          "Delete all the subscriber's in-app messages, or those of one feed (`feedId`: the feed's id)",
        querystring: WidgetDeleteAllQuery,
        response: {
          200: described(Deleted, "Deleted"),
          ...errorResponsesOf({ 400: "Invalid query", 404: "No such feed in this environment" }),
        },
      },
    },
    async (request) => {
      const { feedId } = request.query;
      // As Novu: an empty feedId is none; an unknown one is a 404.
      const feed = feedId ? await getFeed(depsOf(app), request.tenant, feedId) : undefined;
      await remove(request, undefined, feed?.id);
      return deletedBody;
    },
  );
};
