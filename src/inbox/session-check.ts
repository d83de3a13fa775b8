import type { FastifyContextConfig, FastifyReply, FastifyRequest } from "fastify";
import { type App, depsOf } from "../http/types.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import type { InboxOwner } from "./repository.ts";
import { type SessionTools, sessionSubscriber, verifySession } from "./session.ts";
import type { SubscriberSession } from "./session-tokens.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Set by the session check on the routes a subscriber's session calls (/v1/inbox and
     * /v1/widgets, but their sessions' start): who the request acts for.
     */
    subscriberSession: { session: SubscriberSession; subscriber: Subscriber };
    /**
     * Set instead, on the routes marked `readsSubscriberAlongside`: the session, checked, and its
     * subscriber being read (a 401 when it is gone), which the route awaits beside its own work.
     */
    pendingSession: { session: SubscriberSession; owner: InboxOwner; subscriber: Promise<Subscriber> };
  }
}

// Not exported: readsSubscriberAlongside is the only way to mark a route.
const ALONGSIDE = Symbol("readsSubscriberAlongside");

/**
 * A session route's config: its handler reads `request.pendingSession` and awaits the subscriber
 * alongside its own statements, rather than after the check has read it (one round trip less on
 * PostgreSQL). The handler must await it before it answers: a deleted subscriber is still a 401.
 */
export const readsSubscriberAlongside = { [ALONGSIDE]: true } as FastifyContextConfig;

const alongside = (config: unknown) =>
  typeof config === "object" && config !== null && (config as Record<symbol, unknown>)[ALONGSIDE] === true;

/**
 * Runs a marked route's work (see readsSubscriberAlongside) beside the read of the session's
 * subscriber, and answers both. The subscriber's 401 comes first, as when the check reads it before.
 */
export async function alongsideSubscriber<T>(
  request: FastifyRequest,
  work: (owner: InboxOwner) => Promise<T>,
): Promise<[Subscriber, T]> {
  const { owner, subscriber } = request.pendingSession;
  const [who, done] = await Promise.allSettled([subscriber, Promise.resolve(owner).then(work)]);
  if (who.status === "rejected") throw who.reason;
  if (done.status === "rejected") throw done.reason;
  return [who.value, done.value];
}

/** The error to answer a session route's failure with: the 401 of a subscriber gone, before any other. */
export async function subscriberGoneFirst(request: FastifyRequest, error: Error): Promise<Error> {
  const pending = (request.pendingSession as FastifyRequest["pendingSession"] | undefined)?.subscriber;
  if (!pending) return error;
  return pending.then(
    () => error,
    (gone: Error) => gone,
  );
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
      const verified = await verifySession(tools.tokens, request.headers.authorization);
      const { session, tenant } = verified;
      request.tenant = tenant;
      const subscriber = sessionSubscriber(depsOf(app), verified);
      if (alongside(request.routeOptions.config)) {
        // Awaited by the handler; a rejection is never left unhandled meanwhile.
        subscriber.catch(() => {});
        const owner = { environmentId: session.environmentId, subscriberRef: session.subscriberRef };
        request.pendingSession = { session, owner, subscriber };
      } else {
        request.subscriberSession = { session, subscriber: await subscriber };
      }
    } catch (error) {
      await app.limitRate(request, reply);
      throw error;
    }
    await app.limitRate(request, reply);
  };
}
