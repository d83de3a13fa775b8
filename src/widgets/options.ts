import type { FastifyReply, FastifyRequest } from "fastify";
import { type App, depsOf } from "../http/types.ts";
import type { InboxListener } from "../inbox/service.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { authenticateSession, type WidgetSession, type WidgetTools } from "./service.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the widget session check on /v1/widgets routes (but the session's start). */
    widget: { session: WidgetSession; subscriber: Subscriber };
  }
}

/** What the widget routes are handed by app.ts. */
export interface WidgetRouteOptions extends Record<string, unknown> {
  tools: WidgetTools;
  /** Told of every change to a subscriber's feed, after its commit (the sockets). */
  onChange?: InboxListener | undefined;
  /** Told of each usage event the widget logs (metrics). */
  onUsage?: ((name: string) => void) | undefined;
}

/** The inbox change of the request's subscriber. */
export const changeOf = (request: FastifyRequest) => ({
  environmentId: request.tenant.environmentId,
  subscriberRef: request.widget.subscriber.id,
});

/**
 * The widget routes' authentication: `Authorization: Bearer <session token>`, never an API key. The
 * request then acts as the session's subscriber in its environment, rate limited with it.
 */
export function sessionCheck(app: Pick<App, "store" | "clock" | "limitRate">, tools: WidgetTools) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const { session, tenant, subscriber } = await authenticateSession(
        depsOf(app),
        tools.tokens,
        request.headers.authorization,
      );
      request.tenant = tenant;
      request.widget = { session, subscriber };
    } catch (error) {
      await app.limitRate(request, reply);
      throw error;
    }
    await app.limitRate(request, reply);
  };
}
