import type { IncomingMessage, ServerResponse } from "node:http";
import helmet, { type HelmetOptions } from "helmet";
import type { Config } from "../config.ts";
import type { App } from "../http/types.ts";

/**
 * The headers helmet sets for a policy, worked out once. Our policy has no per-request part (no
 * nonces), yet helmet's middleware re-derives every header on every request: a twentieth of a
 * request's CPU under load. We run it once against a recording response and replay the result.
 */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let done = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  if (!done) throw new Error("helmet did not finish synchronously; its headers cannot be precomputed");
  return headers;
}

/**
 * Security headers on every response, and CORS only for the origins CORS_ORIGINS names (none by
 * default: a browser page on another origin cannot call the API), but for the inbox's routes
 * (/v1/inbox and the widget's /v1/widgets), which any page may call.
 *
 * CORS is answered by a hook of our own, with each policy's headers worked out once, as
 * @fastify/cors answered it (which this replaces): its per-request options (a delegator, to tell the
 * inbox's routes from the API's) were normalized anew on every request, a twentieth of a request's
 * CPU, though they never change.
 *
 * The API answers JSON, so its policy is the strictest (`default-src 'none'`). The docs page brings
 * its own policy from @fastify/swagger-ui (`staticCSP`, hashes of its inline scripts), which replaces
 * this one on /docs; `upgrade-insecure-requests` is left out of both so that /docs also works over
 * plain HTTP on a private address.
 */
export async function registerSecurity(app: App, config: Config): Promise<void> {
  const headers = helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'none'"],
        "frame-ancestors": ["'none'"],
      },
    },
    // An API's responses are read by programs, and by browsers only through CORS.
    crossOriginResourcePolicy: { policy: config.corsOrigins.length > 0 ? "cross-origin" : "same-origin" },
  });
  app.addHook("onRequest", (_request, reply, done) => {
    reply.headers(headers);
    done();
  });

  const exposed = [
    "X-Request-Id",
    "Retry-After",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "Idempotency-Replay",
  ].join(", ");
  const api: CorsPolicy = {
    origins:
      config.corsOrigins.length === 0 ? false : config.corsOrigins.includes("*") ? "*" : config.corsOrigins,
    allowedHeaders: "Authorization, Content-Type, Idempotency-Key, X-Request-Id",
  };
  // The inbox widget runs in the customer's pages, wherever they are: its routes answer any origin.
  // Safe because they read no cookie: a session token (or the environment's public identifier and
  // an HMAC, to start one) says who asks, and Access-Control-Allow-Credentials is never sent.
  const widget: CorsPolicy = {
    origins: true,
    allowedHeaders: "Authorization, Content-Type, User-Agent, X-Request-Id",
  };
  // Novu's current inbox (@novu/js) sends its version headers on every call, the session's start too.
  const inbox: CorsPolicy = {
    origins: true,
    allowedHeaders:
      "Authorization, Content-Type, Novu-API-Version, Novu-Client-Version, Novu-Application-Identifier, X-Request-Id",
  };
  app.addHook("onRequest", (request, reply, done) => {
    const url = request.url;
    const policy = url.startsWith("/v1/inbox/") ? inbox : url.startsWith("/v1/widgets/") ? widget : api;
    // The answer depends on the Origin asked from, whether or not CORS is on for the route.
    const vary = reply.getHeader("vary");
    if (vary === undefined) reply.header("vary", "Origin");
    else if (!/(?:^|,)\s*(?:origin|\*)\s*(?:,|$)/i.test(String(vary)))
      reply.header("vary", `${vary}, Origin`);
    if (policy.origins === false) {
      done();
      return;
    }
    const origin = request.headers.origin;
    if (policy.origins === "*") reply.header("access-control-allow-origin", "*");
    else if (origin && (policy.origins === true || policy.origins.includes(origin)))
      reply.header("access-control-allow-origin", origin);
    reply.header("access-control-expose-headers", exposed);
    if (request.raw.method !== "OPTIONS") {
      done();
      return;
    }
    // A preflight, answered here, before anything that would refuse it for want of a key. Bare
    // OPTIONS (no Origin) get the same empty answer instead of a 400.
    reply.header("access-control-allow-methods", "GET, POST, PUT, PATCH, DELETE");
    reply.header("access-control-allow-headers", policy.allowedHeaders);
    reply.header("access-control-max-age", "600");
    reply.code(204).header("content-length", "0").send();
  });
  // Where CORS is off, a preflight reaches this route: there is nothing there.
  app.options("*", { schema: { hide: true } }, (_request, reply) => reply.callNotFound());
}

/**
 * Which pages may call a set of routes: none (false), any (true), every origin ("*", answered as
 * such) or those listed; and the request headers their preflights allow.
 */
interface CorsPolicy {
  origins: false | true | "*" | readonly string[];
  allowedHeaders: string;
}

/** The docs page's own policy, minus `upgrade-insecure-requests` (see above). */
export const docsCsp = (header: string) => header.replace(/\s*upgrade-insecure-requests;?/g, "").trim();
