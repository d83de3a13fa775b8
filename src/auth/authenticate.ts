import type { FastifyReply, FastifyRequest } from "fastify";
import { errorBody, unauthorized } from "../errors.ts";
import { pathOf } from "../http/error-handler.ts";
import { hashApiKey } from "../tenancy/api-keys.ts";
import type { KeyOwner } from "../tenancy/domain.ts";
import type { Tenant } from "../tenant.ts";
import { isKeyGuarded } from "./guarded-route.ts";
import { asVerifier, type KeyLookup, type KeyVerifier } from "./key-verifier.ts";

export type { KeyLookup, KeyVerifier } from "./key-verifier.ts";
export { cachedKeys, uncachedKeys } from "./key-verifier.ts";

const MAX_HEADER_LENGTH = 1024;

// What an authorization scheme looks like (Bearer, Basic, Token...). Anything else in the scheme's
// place may well be a key sent without its scheme word, and is never echoed back: a client that logs
// error messages would log the secret.
const SCHEME_WORD = /^[A-Za-z][A-Za-z0-9_-]{0,19}$/;

function unsupportedScheme(scheme: string) {
  const quoted = SCHEME_WORD.test(scheme) && !scheme.toLowerCase().startsWith("tid_") ? `"${scheme}" ` : "";
  return unauthorized(`Unsupported authorization scheme ${quoted}; use "ApiKey <key>"`.replace(" ;", ";"));
}

/**
 * Reads `Authorization: ApiKey <key>` (contract part 3): the scheme word in any case, one or more
 * spaces, the key; surrounding whitespace trimmed. The key is read from this header only.
 */
export function parseAuthorization(header: string | string[] | undefined): string {
  if (header === undefined || Array.isArray(header) || header.trim() === "") {
    throw unauthorized("Missing Authorization header");
  }
  if (header.length > MAX_HEADER_LENGTH) throw unauthorized("Invalid API key");
  const value = header.trim();
  const space = value.search(/\s/);
  const scheme = space === -1 ? value : value.slice(0, space);
  if (scheme.toLowerCase() !== "apikey") {
    throw unsupportedScheme(scheme);
  }
  const key = space === -1 ? "" : value.slice(space).trim();
  if (key === "" || /\s/.test(key)) throw unauthorized("Invalid API key");
  return key;
}

const tenantOf = (owner: KeyOwner): Tenant => ({
  organizationId: owner.organizationId,
  environmentId: owner.environmentId,
  actorId: owner.apiKeyId,
});

/** Requests authenticated from memory, whose key the database has not yet confirmed. */
const unconfirmed = new WeakMap<FastifyRequest, { hash: string; keys: KeyVerifier }>();

/**
 * The tenant the request's API key stands for. Synchronous when the route is key-guarded and this
 * process remembers the key (no promise on the hot path); otherwise the lookup's promise. A missing or
 * malformed header throws at once.
 */
export function authenticate(
  request: FastifyRequest,
  keys: KeyLookup | KeyVerifier,
): Tenant | Promise<Tenant> {
  const key = parseAuthorization(request.headers.authorization);
  const hash = hashApiKey(key);
  const verifier = asVerifier(keys);
  // Only a key-guarded route's handler is given a claim rather than this tenant (guarded-route.ts).
  if (isKeyGuarded(request.routeOptions.config)) {
    const remembered = verifier.remembered(hash);
    if (remembered) {
      unconfirmed.set(request, { hash, keys: verifier });
      return tenantOf(remembered);
    }
  }
  return verifier.lookup(hash).then((owner) => {
    if (!owner) throw unauthorized("Invalid API key");
    return tenantOf(owner);
  });
}

/**
 * onSend hook: a request authenticated from memory that is about to be refused (4xx) has its key
 * confirmed first, so that a revoked key is told 401, not what its statement found (or failed to
 * validate). A 2xx needs no confirmation: the guarded statement matched, so the key was live.
 * Callback style, so the common case (nothing to confirm) costs no promise.
 */
export function confirmRememberedKey(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
): void {
  const pending = unconfirmed.get(request);
  if (!pending || reply.statusCode < 400 || reply.statusCode >= 500) {
    done(null, payload);
    return;
  }
  unconfirmed.delete(request);
  pending.keys.lookup(pending.hash).then(
    (owner) => {
      if (owner) {
        done(null, payload);
        return;
      }
      pending.keys.forget(pending.hash);
      reply.code(401).header("www-authenticate", "ApiKey");
      done(null, JSON.stringify(errorBody(401, "Invalid API key", pathOf(request))));
    },
    (error: Error) => done(error),
  );
}
