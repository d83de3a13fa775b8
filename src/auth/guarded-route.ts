import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  ContextConfigDefault,
  FastifyContextConfig,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteShorthandOptionsWithHandler,
} from "fastify";
import type { ResolveFastifyReplyReturnType } from "fastify/types/type-provider.js";
import { KeyClaim } from "./key-guard.ts";

// Not exported: keyGuardedRoute is the only way to mark a route, so a route cannot be marked
// without its handler being given a claim instead of a tenant.
const KEY_GUARDED = Symbol("keyGuarded");

type Request<S extends FastifySchema> = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  S,
  TypeBoxTypeProvider
>;
type Reply<S extends FastifySchema> = FastifyReply<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

/** What a key-guarded handler sees of its request: all of it but `tenant`, which nothing has confirmed. */
export type GuardedRequest<S extends FastifySchema> = Omit<Request<S>, "tenant">;

export interface KeyGuardedRoute<S extends FastifySchema> {
  schema: S;
  handler(
    request: GuardedRequest<S>,
    reply: Reply<S>,
    claim: KeyClaim,
  ): ResolveFastifyReplyReturnType<TypeBoxTypeProvider, S, RouteGenericInterface>;
}

/**
 * A route that may authenticate from memory (see key-verifier.ts): `app.put(url, keyGuardedRoute({
 * schema, handler }))`. Its handler gets the key's claim (key-guard.ts) in place of the request's
 * tenant, and a claim opens only in a statement that re-checks the key.
 */
export function keyGuardedRoute<const S extends FastifySchema>(
  route: KeyGuardedRoute<S>,
): RouteShorthandOptionsWithHandler<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
> {
  return {
    schema: route.schema,
    config: { [KEY_GUARDED]: true } as FastifyContextConfig,
    handler(request, reply) {
      return route.handler(request, reply, new KeyClaim(request.tenant));
    },
  };
}

/** Whether a route's config (`request.routeOptions.config`, or an onRoute hook's) marks it key-guarded. */
export function isKeyGuarded(config: unknown): boolean {
  return (
    typeof config === "object" && config !== null && (config as Record<symbol, unknown>)[KEY_GUARDED] === true
  );
}
