import { hkdfSync, randomBytes } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import type { Clock } from "../clock.ts";

/** Who a subscriber's session speaks for: one subscriber of one environment, until it expires. */
export interface SubscriberSession {
  organizationId: string;
  environmentId: string;
  /** Our id for the subscriber (its `_id`): a subscriber deleted and made again is another one. */
  subscriberRef: string;
  subscriberId: string;
  /** Epoch ms, by the app's clock. */
  expiresAt: number;
}

// The audience and the key's label keep their first names: tokens issued before the inbox's
// routes were added stay good.
const AUDIENCE = "tidings:widget";
const ALGORITHM = "HS256";

/**
 * The session tokens of the inbox, for both of its clients (Novu's current inbox at /v1/inbox and
 * the older widget at /v1/widgets, and the sockets of either): JWTs (HS256, by `jose`) that name the environment and the
 * subscriber, signed with a key derived from the service's secret key (HKDF, its own label), so every
 * process that shares TIDINGS_SECRET_KEY accepts every other's tokens and nothing else can make one.
 * Expiry is read on the app's clock, so a test moves past it instead of waiting.
 */
export class SessionTokens {
  readonly #key: Uint8Array;
  readonly #ttlMs: number;
  readonly #clock: Clock;

  constructor(options: { secretKey: Buffer | undefined; ttlSeconds: number; clock: Clock }) {
    // Without a secret key (only a bare buildApp has none) the tokens hold for this process only.
    const secret = options.secretKey ?? randomBytes(32);
    this.#key = new Uint8Array(hkdfSync("sha256", secret, "", "tidings widget session token", 32));
    this.#ttlMs = options.ttlSeconds * 1000;
    this.#clock = options.clock;
  }

  async issue(session: Omit<SubscriberSession, "expiresAt">): Promise<{ token: string; expiresAt: number }> {
    const now = this.#clock.now();
    const expiresAt = now + this.#ttlMs;
    const token = await new SignJWT({
      org: session.organizationId,
      env: session.environmentId,
      sid: session.subscriberId,
    })
      .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .setSubject(session.subscriberRef)
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(this.#key);
    return { token, expiresAt: Math.floor(expiresAt / 1000) * 1000 };
  }

  /** The session the token carries; undefined when it is malformed, forged or expired. */
  async verify(token: string): Promise<SubscriberSession | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: [ALGORITHM],
        audience: AUDIENCE,
        currentDate: new Date(this.#clock.now()),
        requiredClaims: ["exp", "sub"],
      });
      const { org, env, sid, sub, exp } = payload;
      if (typeof org !== "string" || typeof env !== "string" || typeof sid !== "string") return undefined;
      if (typeof sub !== "string" || typeof exp !== "number") return undefined;
      return {
        organizationId: org,
        environmentId: env,
        subscriberRef: sub,
        subscriberId: sid,
        expiresAt: exp * 1000,
      };
    } catch {
      return undefined;
    }
  }
}
