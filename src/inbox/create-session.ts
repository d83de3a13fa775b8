import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { InboxSessionRouteOptions } from "./options.ts";
import { startInboxSession } from "./service.ts";
import { InboxSessionBody, InboxSessionResponse } from "./session-schemas.ts";

export const createSessionRoute: RoutePluginWith<InboxSessionRouteOptions> = async (app, options) => {
  app.post(
    "/session",
    {
      schema: {
        operationId: "startInboxSession",
        tags: ["Inbox session"],
        summary: "Start a subscriber's inbox session (no API key: the browser calls this)",
        description:
          "Creates the subscriber if need be and returns a token for its inbox alone. When the environment has " +
          "`hmac: true` (Production starts so), `subscriberHash` must be the hex HMAC-SHA256 of the subscriberId " +
          "keyed with the environment's API key, computed on your server; the subscriber's profile fields are " +
          "applied only with a valid hash.",
        security: [],
        body: InboxSessionBody,
        response: {
          201: described(InboxSessionResponse, "The session"),
          ...errorResponsesOf({
            400: "Unknown applicationIdentifier, no subscriberId, or a missing or wrong subscriberHash with HMAC on",
          }),
        },
      },
    },
    async (request, reply) => {
      await app.limitRate(request, reply);
      const { token, environment, unread } = await startInboxSession(
        depsOf(app),
        options.tools,
        request.body,
      );
      return reply.code(201).send({
        data: {
          token,
          unreadCount: unread,
          totalUnreadCount: unread.total,
          removeNovuBranding: false,
          isDevelopmentMode: environment.name.toLowerCase() !== "production",
          maxSnoozeDurationHours: options.maxSnoozeDurationHours,
          applicationIdentifier: environment.identifier,
        },
      });
    },
  );
};
