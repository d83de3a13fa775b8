import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { Clock } from "../clock.ts";
import type { Deps } from "../deps.ts";
import type { SecretBox } from "../store/secret-box.ts";
import type { Store } from "../store/store.ts";
import type { Tenant } from "../tenant.ts";

declare module "fastify" {
  interface FastifyInstance {
    store: Store;
    /** Business time for everything the app does (src/clock.ts). */
    clock: Clock;
    /** Seals the secrets the services keep (TIDINGS_SECRET_KEY); undefined when the app has no key. */
    secrets: SecretBox | undefined;
  }
  interface FastifyRequest {
    /**
     * Set by the API-key check on every /v1 route; absent elsewhere. On a key-guarded route it may
     * be a remembered key's, not yet confirmed: that route's handler is not shown it, only a claim
     * (src/auth/guarded-route.ts).
     */
    tenant: Tenant;
  }
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type RoutePlugin = FastifyPluginAsync<Record<never, never>, RawServerDefault, TypeBoxTypeProvider>;

/** A route plugin that is handed what it needs from the features above its own (see app.ts). */
export type RoutePluginWith<Options extends Record<string, unknown>> = FastifyPluginAsync<
  Options,
  RawServerDefault,
  TypeBoxTypeProvider
>;

/** The services' dependencies for a request: the store's database (or a transaction), the app's clock and secrets. */
export const depsOf = (
  app: { store: Store; clock: Clock; secrets?: SecretBox | undefined },
  db = app.store.db,
): Deps => ({ db, clock: app.clock, secrets: app.secrets });
