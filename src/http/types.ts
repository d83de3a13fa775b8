import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { Store } from "../store/store.ts";
import type { Tenant } from "../tenancy/tenant.ts";

declare module "fastify" {
  interface FastifyInstance {
    store: Store;
  }
  interface FastifyRequest {
    /** Set by the API-key check on every /v1 route; absent elsewhere. */
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
