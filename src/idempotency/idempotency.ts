import { createHash, randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { type TSchema, Type } from "typebox";
import { conflict, unprocessable } from "../errors.ts";
import { pathOf } from "../http/error-handler.ts";
import type { Database } from "../store/schema.ts";
import * as keys from "./repository.ts";

/** How long a key and its response are kept (contract part 8). */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claim older than this that never completed is taken to belong to a request whose process died,
 * and a retry may take it over. Safety does not rest on this number: a request completes only if
 * its claim is still its own (compare-and-set on the claim token, in the write's transaction), so
 * a slow request that was taken over rolls its write back and exactly one of the two writes lands.
 * The lease only bounds how long retries after a crash hear 409 (far longer than a write takes).
 */
export const CLAIM_LEASE_MS = 10 * 1000;
export const MAX_KEY_LENGTH = 255;

export const IDEMPOTENCY_HEADER = "idempotency-key";
export const REPLAY_HEADER = "idempotency-replay";

/** The header as route schemas declare it: validated (1–255 characters) and described in OpenAPI. */
export const IdempotencyKeyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_KEY_LENGTH,
      description:
        "Makes a retry safe: a request repeated with the same key (within 24 hours, in the same environment) " +
        "gets the first response again, with `Idempotency-Replay: true`, instead of acting twice. The same key " +
        "while the first request still runs: 409 with `Retry-After`; with a different request: 422.",
    }),
  ),
});

/**
 * The header as the trigger routes declare it: there the key stands for the transactionId of each
 * event that has none, so the trigger's own record (unique per transactionId, written in the
 * trigger's one transaction) is what makes a retry safe (docs/engine.md, "Triggering").
 */
export const TriggerIdempotencyKeyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_KEY_LENGTH,
      description:
        "Makes a retry safe (@novu/api sends one on every call): an event without a transactionId takes one made " +
        "from this key, so a request repeated with the same key gets the first acknowledgement again, with " +
        "`Idempotency-Replay: true`, and runs nothing twice. The same key with a different request: 422.",
    }),
  ),
});

/** The request's Idempotency-Key and the hash that tells another request under it; undefined without a key. */
export function requestKeyOf(
  request: Pick<FastifyRequest, "headers" | "method" | "body" | "raw" | "url">,
): { key: string; requestHash: string } | undefined {
  const header = request.headers[IDEMPOTENCY_HEADER];
  if (typeof header !== "string") return undefined;
  return { key: header, requestHash: hashRequest(request.method, pathOf(request), request.body) };
}

/** A success response that a retry with the same key replays: OpenAPI shows the replay header. */
export const replayable = <T extends TSchema>(schema: T): T => ({
  ...schema,
  headers: {
    [REPLAY_HEADER]: {
      type: "string",
      enum: ["true"],
      description:
        "Present when this is the stored response of an earlier request with the same Idempotency-Key",
    },
  },
});

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What makes two requests "the same": method, path and body (its key order aside). */
export function hashRequest(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method.toUpperCase()} ${path}\n${canonical(body ?? null)}`)
    .digest("hex");
}

const requestHash = (request: FastifyRequest) => hashRequest(request.method, pathOf(request), request.body);

const inFlight = () =>
  conflict("A request with this Idempotency-Key is still being processed; retry shortly", {
    "retry-after": "1",
  });

/** Sends JSON text as it is (no second serialisation); the handler then returns nothing. */
function sendJson(reply: FastifyReply, statusCode: number, body: string): undefined {
  reply.code(statusCode).type("application/json; charset=utf-8").send(body);
  return undefined;
}

const MAX_CLAIM_ATTEMPTS = 3;

/**
 * Runs a POST or PATCH under its Idempotency-Key (contract part 8), or plainly when it has none.
 *
 * 1. The key is claimed by a row of its own (status 0, committed at once), which is what a
 *    concurrent request with the same key sees: 409, or 422 if its request differs.
 * 2. The write runs in a transaction that also stores the response on that row, so the resource
 *    and its response are committed together: a retry after a crash either finds the response (and
 *    replays it) or finds no write (and an abandoned claim it may take over, see CLAIM_LEASE_MS).
 * 3. A write that fails (4xx or 5xx) wrote nothing and releases the key: a corrected request may use
 *    it again. Only successes are replayed.
 */
export async function idempotent<T>(
  db: Kysely<Database>,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number | ((result: T) => number),
  write: (db: Kysely<Database>) => Promise<T>,
): Promise<T | undefined> {
  const statusOf = (result: T) => (typeof status === "number" ? status : status(result));
  const header = request.headers[IDEMPOTENCY_HEADER];
  if (typeof header !== "string") {
    const result = await write(db);
    reply.code(statusOf(result));
    return result;
  }
  // The app's clock: a key's 24 hours are business time, which tests move on by hand.
  const now = new Date(request.server.clock.now());
  const claim: keys.Claim = {
    environmentId: request.tenant.environmentId,
    key: header,
    requestHash: requestHash(request),
    token: randomUUID(),
    now: now.toISOString(),
    expiresAt: new Date(now.getTime() + KEY_TTL_MS).toISOString(),
  };
  const abandonedBefore = new Date(now.getTime() - CLAIM_LEASE_MS).toISOString();

  let claimed = false;
  for (let attempt = 0; !claimed && attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    claimed = await keys.claimKey(db, claim);
    if (claimed) break;
    const existing = await keys.findKey(db, claim.environmentId, claim.key);
    if (!existing) continue; // released a moment ago: claim again
    const expired = existing.expiresAt <= claim.now;
    const abandoned = existing.statusCode === keys.IN_FLIGHT && existing.createdAt < abandonedBefore;
    if (expired || abandoned) {
      claimed = await keys.takeOverKey(db, claim, abandonedBefore);
      continue;
    }
    if (existing.requestHash !== claim.requestHash) {
      throw unprocessable(
        "This Idempotency-Key was already used for a different request; send a new key with a new request",
        IDEMPOTENCY_HEADER,
      );
    }
    if (existing.statusCode === keys.IN_FLIGHT) throw inFlight();
    reply.header(REPLAY_HEADER, "true");
    return sendJson(reply, existing.statusCode, existing.responseBody);
  }
  if (!claimed) throw inFlight();

  let body: string;
  let statusCode = 0;
  try {
    body = await db.transaction().execute(async (tx) => {
      const result = await write(tx);
      statusCode = statusOf(result);
      // The route's response schema serialises it: what is stored is exactly what is sent.
      reply.code(statusCode);
      // Our serialisers are JSON ones: they return text, never a Buffer.
      const text = String(reply.serialize(result));
      if (!(await keys.completeKey(tx, claim, statusCode, text))) throw inFlight();
      return text;
    });
  } catch (error) {
    await keys.releaseKey(db, claim).catch((releaseError: unknown) => {
      // The claim then lapses after CLAIM_LEASE_MS instead.
      request.log.warn({ err: releaseError }, "could not release an idempotency key");
    });
    throw error;
  }
  return sendJson(reply, statusCode, body);
}
