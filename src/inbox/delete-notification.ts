import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { NotificationParams } from "./notification-schemas.ts";
import type { InboxSessionRouteOptions } from "./options.ts";
import { deleteNotification } from "./service.ts";
import { changeOf } from "./session-check.ts";

export const deleteNotificationRoute: RoutePluginWith<InboxSessionRouteOptions> = async (app, options) => {
  app.delete(
    "/notifications/:id/delete",
    {
      schema: {
        operationId: "deleteInboxNotification",
        tags: ["Inbox session"],
        summary: "Delete a notification",
        params: NotificationParams,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({ 404: "The session's subscriber has no such notification" }),
        },
      },
    },
    async (request, reply) => {
      await deleteNotification(depsOf(app), request.subscriberSession.subscriber, request.params.id);
      options.onChange?.(changeOf(request));
      return reply.code(204).send(null);
    },
  );
};
