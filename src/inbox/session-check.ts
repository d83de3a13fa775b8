import type { FastifyReply, FastifyRequest } from "fastify";
import { type App, depsOf } from "../http/types.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { authenticateSession, type SessionTools } from "./session.ts";
import type { SubscriberSession } from "./session-tokens.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Set by the session check on the routes a subscriber's session calls (/v1/inbox and
     * /v1/widgets, but their sessions' start): who the request acts for.
     */
    subscriberSession: { session: SubscriberSession; subscriber: Subscriber };
  }
}

/** The change to the feed of the request's subscriber, for the sockets. */
export const changeOf = (request: FastifyRequest) => ({
  environmentId: request.tenant.environmentId,
  subscriberRef: request.subscriberSession.subscriber.id,
});

/**
 * The session routes' authentication: `Authorization: Bearer <session token>`, never an API key.
 * The request then acts as the session's subscriber in its environment, rate limited with it.
 */
export function sessionCheck(app: Pick<App, "store" | "clock" | "limitRate">, tools: SessionTools) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const { session, tenant, subscriber } = await authenticateSession(
        depsOf(app),
        tools.tokens,
        request.headers.authorization,
      );
      request.tenant = tenant;
      request.subscriberSession = { session, subscriber };
    } catch (error) {
      await app.limitRate(request, reply);
      throw error;
    }
    await app.limitRate(request, reply);
  };
}
