import { createHmac, timingSafeEqual } from "node:crypto";
import type { Deps } from "../deps.ts";
import { badRequest, unauthorized } from "../errors.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { getSubscriberByRef, upsertSubscriber } from "../subscribers/service.ts";
import { findEnvironmentByIdentifier, type KeySealer, openEnvironmentKeys } from "../tenancy/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { SessionTokens, WidgetSession } from "./session-tokens.ts";

export type { WidgetSession } from "./session-tokens.ts";
export { SessionTokens } from "./session-tokens.ts";

/** What the widget's session needs beyond the database: the key sealer (for HMAC) and the tokens. */
export interface WidgetTools {
  readonly sealer: KeySealer | undefined;
  readonly tokens: SessionTokens;
}

export interface SessionInput {
  applicationIdentifier: string;
  subscriberId: string;
  hmacHash?: string | null | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  email?: string | undefined;
  phone?: string | undefined;
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
 * Starts a subscriber's widget session (docs/engine.md, "The inbox widget in real time"): the environment named by its public
 * application identifier, the HMAC checked when the environment asks for one, the subscriber created
 * or updated with the profile fields sent, and a token for that subscriber alone.
 */
export async function initializeSession(deps: Deps, tools: WidgetTools, input: SessionInput) {
  const found = await findEnvironmentByIdentifier(deps, input.applicationIdentifier);
  if (!found) {
    throw badRequest(
      "No environment has this applicationIdentifier; GET /v1/environments/me shows the environment's",
    );
  }
  const { environment } = found;
  if (environment.hmac) await checkHmac(deps, tools, environment.id, input);
  const tenant: Tenant = {
    organizationId: environment.organizationId,
    environmentId: environment.id,
    actorId: "",
  };
  const subscriber = await upsertSubscriber(deps, tenant, {
    subscriberId: input.subscriberId,
    ...(input.firstName !== undefined ? { firstName: input.firstName } : {}),
    ...(input.lastName !== undefined ? { lastName: input.lastName } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
    ...(input.phone !== undefined ? { phone: input.phone } : {}),
  });
  const { token, expiresAt } = await tools.tokens.issue({
    organizationId: environment.organizationId,
    environmentId: environment.id,
    subscriberRef: subscriber.id,
    subscriberId: subscriber.subscriberId,
  });
  return { token, expiresAt, subscriber };
}

async function checkHmac(deps: Deps, tools: WidgetTools, environmentId: string, input: SessionInput) {
  const given = input.hmacHash ?? "";
  if (given === "") {
    throw badRequest(
      "hmacHash is required: HMAC is on for this environment (send the hex HMAC-SHA256 of the subscriberId, keyed with the environment's API key)",
    );
  }
  const { keys, unsealable } = await openEnvironmentKeys(deps, environmentId, tools.sealer);
  if (keys.some((key) => sameHex(subscriberHmac(key, input.subscriberId), given))) return;
  if (keys.length === 0 && unsealable > 0) {
    throw badRequest(
      "hmacHash cannot be checked: this environment's API keys were made without the service's secret key; regenerate the key (POST /v1/environments/api-keys/regenerate)",
    );
  }
  throw badRequest("hmacHash does not match the subscriberId for this environment's API key");
}

/** The session a Bearer token carries, with its subscriber as it is now; a 401 otherwise. */
export async function authenticateSession(
  deps: Deps,
  tokens: SessionTokens,
  authorization: string | string[] | undefined,
): Promise<{ session: WidgetSession; tenant: Tenant; subscriber: Subscriber }> {
  if (typeof authorization !== "string" || authorization.trim() === "") {
    throw unauthorized('Missing Authorization header; send the widget session\'s token as "Bearer <token>"');
  }
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw unauthorized('Use "Bearer <token>" with the token of a widget session');
  return authenticateToken(deps, tokens, match[1]);
}

/** The session a token carries, as `authenticateSession` (the socket sends the token alone). */
export async function authenticateToken(
  deps: Deps,
  tokens: SessionTokens,
  token: string,
): Promise<{ session: WidgetSession; tenant: Tenant; subscriber: Subscriber }> {
  const session = token.length <= 4096 ? await tokens.verify(token) : undefined;
  if (!session) throw unauthorized("The widget session's token is invalid or has expired");
  const tenant: Tenant = {
    organizationId: session.organizationId,
    environmentId: session.environmentId,
    actorId: "",
  };
  const subscriber = await getSubscriberByRef(deps, tenant, session.subscriberRef);
  if (!subscriber || subscriber.subscriberId !== session.subscriberId) {
    throw unauthorized("The widget session's subscriber no longer exists");
  }
  return { session, tenant, subscriber };
}
