import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { changeOf } from "../inbox/index.ts";
import { feedIdentifiersOf, MarkAllResponse } from "../inbox/schemas.ts";
import { markAllSubscriberMessages } from "../inbox/service.ts";
import type { WidgetRouteOptions } from "./options.ts";
import { WidgetMarkAllBody } from "./schemas.ts";

/** Marks every message of the subscriber read (`/read`) or seen (`/seen`); `feedId`: of those feeds (identifiers). */
export const markAllMessagesRoute: RoutePluginWith<WidgetRouteOptions> = async (app, options) => {
  for (const markAs of ["read", "seen"] as const) {
    app.post(
      `/messages/${markAs}`,
      {
        schema: {
          operationId: markAs === "read" ? "markAllWidgetMessagesRead" : "markAllWidgetMessagesSeen",
          tags: ["Widget"],
          summary: `Mark all the subscriber's messages ${markAs}`,
          body: WidgetMarkAllBody,
          response: {
            201: described(MarkAllResponse, "How many messages changed"),
            ...errorResponsesOf({ 400: "Invalid body" }),
          },
        },
      },
      async (request, reply) => {
        const { count } = await markAllSubscriberMessages(
          depsOf(app),
          request.tenant,
          request.subscriberSession.subscriber.subscriberId,
          markAs,
          feedIdentifiersOf(request.body?.feedId ?? undefined),
        );
        if (count > 0) options.onChange?.(changeOf(request));
        return reply.code(201).send({ data: count });
      },
    );
  }
};
