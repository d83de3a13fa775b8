import { createHash } from "node:crypto";
import type { KeyClaim } from "../auth/key-claim.ts";
import { type Deps, onConnection } from "../deps.ts";
import type { Accepted, EngineDeps, Recipient, TriggerAck } from "../engine/service.ts";
import { acceptTrigger, cancelTrigger } from "../engine/service.ts";
import { ApiError, badRequest, type FieldError } from "../errors.ts";
import { compileBodyCheck, type Problems } from "../http/validation.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import {
  type BroadcastBodyValue,
  MAX_DOCUMENT_BYTES,
  TriggerBody,
  type TriggerBodyValue,
} from "./schemas.ts";

/**
 * The one rule of a trigger body that its schema cannot say: `payload` and `overrides` may each
 * weigh at most MAX_DOCUMENT_BYTES as JSON (JSON Schema has no keyword for a document's size).
 */
function documentSizeProblems(body: Pick<TriggerBodyValue, "payload" | "overrides">): Problems {
  const errors: FieldError[] = [];
  for (const field of ["payload", "overrides"] as const) {
    const value = body[field];
    if (value !== undefined && Buffer.byteLength(JSON.stringify(value)) > MAX_DOCUMENT_BYTES) {
      errors.push({ field, message: `must be at most ${MAX_DOCUMENT_BYTES / 1024} KiB as JSON` });
    }
  }
  const first = errors[0];
  if (!first) return undefined;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see errors)` : "";
  return { message: `${first.field} ${first.message}${more}`, errors };
}

function requireDocumentSizes(body: Pick<TriggerBodyValue, "payload" | "overrides">): void {
  const problems = documentSizeProblems(body);
  if (problems) throw badRequest(problems.message, problems.errors);
}

/**
 * What a trigger request's Idempotency-Key (contract part 8) gives it: the hash of the request, kept
 * with each trigger it makes, and the key itself, from which an event without a transactionId takes
 * one (transactionIdFromKey). A retry of the request (@novu/api retries on 408, 409, 429 and 5xx,
 * with the same key) then repeats transactionIds the environment has seen: the first
 * acknowledgements come back and nothing runs twice.
 */
export interface TriggerRetryKey {
  key: string;
  requestHash: string;
}

/**
 * The transactionId an event without one takes from its request's Idempotency-Key: a UUID (version
 * 5's layout, SHA-1 of the key and the event's place in the request), so it looks like the ones made
 * for triggers without a key, and the same key and place always give the same one.
 */
export function transactionIdFromKey(key: string, index: number): string {
  const bytes = createHash("sha1").update(`tidings:idempotency-key:${index}:${key}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function withRetryKey<T extends { transactionId?: string | undefined }>(
  body: T,
  retry: TriggerRetryKey | undefined,
  index: number,
): T {
  if (!retry || body.transactionId !== undefined) return body;
  return { ...body, transactionId: transactionIdFromKey(retry.key, index) };
}

/**
 * One trigger, its body validated by the route's schema. Its route authenticates from memory
 * (src/auth/key-verifier.ts): the claim is confirmed by the statement that finds the workflow.
 */
export function trigger(
  deps: EngineDeps,
  claim: KeyClaim,
  body: TriggerBodyValue,
  retry?: TriggerRetryKey,
): Promise<Accepted> {
  requireDocumentSizes(body);
  return acceptTrigger(deps, claim, withRetryKey(body, retry, 0), { idempotencyHash: retry?.requestHash });
}

export function broadcast(
  deps: EngineDeps,
  tenant: Tenant,
  body: BroadcastBodyValue,
  retry?: TriggerRetryKey,
): Promise<Accepted> {
  requireDocumentSizes(body);
  return acceptTrigger(deps, tenant, withRetryKey(body, retry, 0), {
    broadcast: true,
    idempotencyHash: retry?.requestHash,
  });
}

export type BulkResult = TriggerAck | { acknowledged: false; status: "error"; error: string[] };

const checkEvent = compileBodyCheck(TriggerBody, "event");

/** What is wrong with one event of a bulk trigger: what its schema says, else its documents' sizes. */
function eventProblems(event: unknown): Problems {
  return checkEvent(event) ?? documentSizeProblems(event as TriggerBodyValue);
}

const refusal = (message: string, errors: readonly FieldError[] = []): BulkResult => ({
  acknowledged: false,
  status: "error",
  error: errors.length > 0 ? errors.map((e) => `${e.field} ${e.message}`) : [message],
});

/**
 * Up to 100 triggers, each accepted or refused on its own, whole (a refusal carries its messages):
 * an event past a quota is refused and the others stand. `retryAfter`: the longest Retry-After of
 * the events a quota refused for now (429), in seconds. `repeat`: every event was accepted before
 * (a retry of the request under its Idempotency-Key). An Idempotency-Key used before with another
 * request is a 422 for the whole request, found at the first event the two share.
 */
export async function bulkTrigger(
  deps: EngineDeps,
  tenant: Tenant,
  events: readonly unknown[],
  retry?: TriggerRetryKey,
): Promise<{ results: BulkResult[]; retryAfter?: number; repeat: boolean }> {
  const results: BulkResult[] = [];
  let retryAfter: number | undefined;
  let repeats = 0;
  for (const [index, event] of events.entries()) {
    const problems = eventProblems(event);
    if (problems) {
      results.push(refusal(problems.message, problems.errors));
      continue;
    }
    try {
      const accepted = await acceptTrigger(
        deps,
        tenant,
        withRetryKey(event as TriggerBodyValue, retry, index),
        { idempotencyHash: retry?.requestHash },
      );
      results.push(accepted.ack);
      if (accepted.repeat) repeats++;
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      // The key names another request: the request is refused whole, whatever it holds.
      if (error.errors?.some((e) => e.field === "idempotency-key")) throw error;
      // A validation error lists its fields; a refusal (422, 429) says it in its message.
      results.push(refusal(error.message, error.statusCode === 400 ? error.errors : undefined));
      const wait = Number(error.headers?.["retry-after"]);
      if (error.statusCode === 429 && wait > 0) retryAfter = Math.max(retryAfter ?? 0, wait);
    }
  }
  const repeat = events.length > 0 && repeats === events.length;
  return retryAfter === undefined ? { results, repeat } : { results, retryAfter, repeat };
}

export function cancel(deps: Deps, tenant: Tenant, transactionId: string): Promise<boolean> {
  return cancelTrigger(onConnection(deps, deps.db), tenant, transactionId);
}

export type { Recipient };
