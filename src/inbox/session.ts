import { createHmac, timingSafeEqual } from "node:crypto";
import type { Deps } from "../deps.ts";
import { ApiError, badRequest, unauthorized } from "../errors.ts";
import type { BucketStore } from "../ops/token-bucket.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import type { CreateSubscriberInput } from "../subscribers/schemas.ts";
import { getSubscriberByRef, subscriberExists, upsertRecipient } from "../subscribers/service.ts";
import type { Environment } from "../tenancy/domain.ts";
import { findEnvironmentByIdentifier, type KeySealer, openEnvironmentKeys } from "../tenancy/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { SessionTokens, SubscriberSession } from "./session-tokens.ts";

/** What a session needs beyond the database: the key sealer (to check an HMAC) and the tokens. */
export interface SessionTools {
  readonly sealer: KeySealer | undefined;
  readonly tokens: SessionTokens;
  /**
   * One bucket per environment for the subscribers sessions create: anyone with the public
   * application identifier can start a session, so creating subscribers through it is capped.
   */
  readonly newSubscribers?: BucketStore | undefined;
}

export interface StartSessionInput {
  applicationIdentifier: string;
  subscriberId: string;
  /** The hex HMAC-SHA256 of the subscriberId, keyed with one of the environment's API keys. */
  hash?: string | null | undefined;
  /** Profile fields to set (null clears one), as a subscriber's upsert takes them. */
  profile: Omit<CreateSubscriberInput, "subscriberId" | "channels">;
}

/**
 * How a client's session treats what it is sent. `hashField` names the hash in its messages (the
 * widget sends `hmacHash`, Novu's current inbox `subscriberHash`). `profileNeedsHash`: the profile
 * fields change the subscriber only when the hash is valid, HMAC required or not, as Novu's current
 * inbox does (a page cannot rename someone else's subscriber); the older widget applies them
 * whenever the session starts.
 */
export interface SessionRules {
  hashField: string;
  profileNeedsHash: boolean;
}

/** The hex HMAC-SHA256 of the subscriberId keyed with an API key: what the customer's server sends along. */
export function subscriberHmac(apiKey: string, subscriberId: string): string {
  return createHmac("sha256", apiKey).update(subscriberId, "utf8").digest("hex");
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, "hex");
  const b = Buffer.from(given.toLowerCase(), "hex");
  // Buffer.from(hex) stops at the first non-hex pair: compare lengths of the text too.
  return given.length === expected.length && a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Starts a subscriber's session (docs/engine.md, "The inbox"): the environment named by its public
 * application identifier, the HMAC checked when the environment asks for one, the subscriber created
 * or updated (see SessionRules), and a token for that subscriber alone.
 */
export async function startSession(
  deps: Deps,
  tools: SessionTools,
  input: StartSessionInput,
  rules: SessionRules,
): Promise<{
  token: string;
  expiresAt: number;
  subscriber: Subscriber;
  environment: Environment;
  tenant: Tenant;
  /** Whether this session made the subscriber. */
  created: boolean;
  /** Whether the hash was sent and matched: the session speaks for the customer's server. */
  verified: boolean;
}> {
  const found = await findEnvironmentByIdentifier(deps, input.applicationIdentifier);
  if (!found) {
    throw badRequest(
      "No environment has this applicationIdentifier; GET /v1/environments/me shows the environment's",
    );
  }
  const { environment } = found;
  const given = input.hash ?? "";
  let verified = false;
  if (environment.hmac) {
    if (given === "") {
      throw badRequest(
        `${rules.hashField} is required: HMAC is on for this environment (send the hex HMAC-SHA256 of the subscriberId, keyed with the environment's API key)`,
      );
    }
    await checkHmac(deps, tools, environment.id, input.subscriberId, given, rules.hashField);
    verified = true;
  } else if (given !== "") {
    verified = await hmacMatches(deps, tools, environment.id, input.subscriberId, given);
  }
  const tenant: Tenant = {
    organizationId: environment.organizationId,
    environmentId: environment.id,
    actorId: "",
  };
  // Without a valid hash a page may not rewrite an existing subscriber's contacts (its e-mail is
  // where the next e-mail goes): the older widget's profile fields only ever describe a subscriber
  // its session creates; Novu's current inbox applies them with a valid hash only.
  const exists = await subscriberExists(deps, tenant, input.subscriberId);
  if (!exists && tools.newSubscribers) {
    const take = await tools.newSubscribers.take(`env:${environment.id}`);
    if (!take.allowed) {
      const seconds = Math.max(1, Math.ceil(take.waitMs / 1000));
      throw new ApiError(
        429,
        `Too many new subscribers from inbox sessions in this environment; retry in ${seconds} second${seconds === 1 ? "" : "s"} (SESSION_NEW_SUBSCRIBERS_PER_MINUTE), or create the subscriber with the API key`,
        undefined,
        { "retry-after": String(seconds) },
      );
    }
  }
  const applyProfile = verified || (!rules.profileNeedsHash && !exists);
  const { subscriber, created } = await upsertRecipient(deps, tenant, {
    subscriberId: input.subscriberId,
    ...(applyProfile ? input.profile : {}),
  });
  const { token, expiresAt } = await tools.tokens.issue({
    organizationId: environment.organizationId,
    environmentId: environment.id,
    subscriberRef: subscriber.id,
    subscriberId: subscriber.subscriberId,
  });
  return { token, expiresAt, subscriber, environment, tenant, created, verified };
}

async function hmacMatches(
  deps: Deps,
  tools: SessionTools,
  environmentId: string,
  subscriberId: string,
  given: string,
): Promise<boolean> {
  const { keys } = await openEnvironmentKeys(deps, environmentId, tools.sealer);
  return keys.some((key) => sameHex(subscriberHmac(key, subscriberId), given));
}

async function checkHmac(
  deps: Deps,
  tools: SessionTools,
  environmentId: string,
  subscriberId: string,
  given: string,
  field: string,
) {
  const { keys, unsealable } = await openEnvironmentKeys(deps, environmentId, tools.sealer);
  if (keys.some((key) => sameHex(subscriberHmac(key, subscriberId), given))) return;
  if (keys.length === 0 && unsealable > 0) {
    throw badRequest(
      `${field} cannot be checked: this environment's API keys were made without the service's secret key; regenerate the key (POST /v1/environments/api-keys/regenerate)`,
    );
  }
  throw badRequest(`${field} does not match the subscriberId for this environment's API key`);
}

/** Who a request acts for: the session its token carries, its environment, and its subscriber as it is now. */
export interface SessionIdentity {
  session: SubscriberSession;
  tenant: Tenant;
  subscriber: Subscriber;
}

/** The session a Bearer token carries, with its subscriber as it is now; a 401 otherwise. */
export async function authenticateSession(
  deps: Deps,
  tokens: SessionTokens,
  authorization: string | string[] | undefined,
): Promise<SessionIdentity> {
  const verified = await verifySession(tokens, authorization);
  return { ...verified, subscriber: await sessionSubscriber(deps, verified) };
}

/** The session a Bearer token carries, checked (signature, audience, expiry), its subscriber unread; a 401 otherwise. */
export async function verifySession(
  tokens: SessionTokens,
  authorization: string | string[] | undefined,
): Promise<Omit<SessionIdentity, "subscriber">> {
  if (typeof authorization !== "string" || authorization.trim() === "") {
    throw unauthorized('Missing Authorization header; send the session\'s token as "Bearer <token>"');
  }
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw unauthorized('Use "Bearer <token>" with the token of a subscriber\'s session');
  return verifyToken(tokens, match[1]);
}

/** The session a token carries, as `authenticateSession` (the socket sends the token alone). */
export async function authenticateToken(
  deps: Deps,
  tokens: SessionTokens,
  token: string,
): Promise<SessionIdentity> {
  const verified = await verifyToken(tokens, token);
  return { ...verified, subscriber: await sessionSubscriber(deps, verified) };
}

async function verifyToken(
  tokens: SessionTokens,
  token: string,
): Promise<Omit<SessionIdentity, "subscriber">> {
  const session = token.length <= 4096 ? await tokens.verify(token) : undefined;
  if (!session) throw unauthorized("The session's token is invalid or has expired");
  const tenant: Tenant = {
    organizationId: session.organizationId,
    environmentId: session.environmentId,
    actorId: "",
  };
  return { session, tenant };
}

/** The session's subscriber as it is now; a 401 when it was deleted since the session began. */
export async function sessionSubscriber(
  deps: Deps,
  { session, tenant }: Omit<SessionIdentity, "subscriber">,
): Promise<Subscriber> {
  const subscriber = await getSubscriberByRef(deps, tenant, session.subscriberRef);
  if (!subscriber || subscriber.subscriberId !== session.subscriberId) {
    throw unauthorized("The session's subscriber no longer exists");
  }
  return subscriber;
}
