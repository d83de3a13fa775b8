import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { startSession } from "../inbox/service.ts";
import type { WidgetRouteOptions } from "./options.ts";
import { presentProfile } from "./presenter.ts";
import { SessionBody, SessionResponse } from "./schemas.ts";

export const initializeSessionRoute: RoutePluginWith<WidgetRouteOptions> = async (app, options) => {
  app.post(
    "/session/initialize",
    {
      schema: {
        operationId: "initializeWidgetSession",
        tags: ["Widget"],
        summary: "Start a subscriber's inbox session (no API key: the browser calls this)",
        description:
          "Creates or updates the subscriber and returns a token for its inbox alone. When the environment has " +
          "`hmac: true` (Production starts so), `hmacHash` must be the hex HMAC-SHA256 of the subscriberId keyed " +
          "with the environment's API key, computed on your server.",
        security: [],
        body: SessionBody,
        response: {
          201: described(SessionResponse, "The session"),
          ...errorResponsesOf({
            400: "Unknown applicationIdentifier, or a missing or wrong hmacHash with HMAC on",
          }),
        },
      },
    },
    async (request, reply) => {
      await app.limitRate(request, reply);
      const { applicationIdentifier, subscriberId, hmacHash, ...profile } = request.body;
      // The widget's profile fields apply whenever its session starts, as they always have.
      const { token, expiresAt, subscriber } = await startSession(
        depsOf(app),
        options.tools,
        { applicationIdentifier, subscriberId, hash: hmacHash, profile },
        { hashField: "hmacHash", profileNeedsHash: false },
      );
      return reply.code(201).send({
        data: { token, expiresAt: new Date(expiresAt).toISOString(), profile: presentProfile(subscriber) },
      });
    },
  );
};
