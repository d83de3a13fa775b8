import { createHash } from "node:crypto";
import type { KeyClaim } from "../auth/key-claim.ts";
import { type Deps, onConnection } from "../deps.ts";
import type { Accepted, EngineDeps, Recipient, TriggerAck } from "../engine/service.ts";
import { acceptBulk, acceptTrigger, cancelTrigger } from "../engine/service.ts";
import { badRequest, type FieldError } from "../errors.ts";
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
 * Up to 100 triggers, each accepted or refused on its own, whole (a refusal carries its messages),
 * but held to the environment's quotas together: a call whose events would pass the recipients of
 * the minute or the jobs the environment may have is refused whole (429 with Retry-After; 422 when
 * the call alone is more than a quota allows), and none of its events is accepted. `repeat`: every
 * event was accepted before (a retry of the request under its Idempotency-Key). An Idempotency-Key
 * used before with another request is a 422 for the whole request.
 */
export async function bulkTrigger(
  deps: EngineDeps,
  tenant: Tenant,
  events: readonly unknown[],
  retry?: TriggerRetryKey,
): Promise<{ results: BulkResult[]; repeat: boolean }> {
  const results: (BulkResult | undefined)[] = [];
  const valid: TriggerBodyValue[] = [];
  for (const [index, event] of events.entries()) {
    const problems = eventProblems(event);
    if (problems) results.push(refusal(problems.message, problems.errors));
    else {
      results.push(undefined);
      valid.push(withRetryKey(event as TriggerBodyValue, retry, index));
    }
  }
  const outcomes = (await acceptBulk(deps, tenant, valid, { idempotencyHash: retry?.requestHash })).values();
  let repeats = 0;
  const answered = results.map((result) => {
    if (result) return result;
    const outcome = outcomes.next().value;
    if (!outcome) throw new Error("a bulk event has no outcome");
    if ("refused" in outcome) {
      const { refused } = outcome;
      // A validation error lists its fields; a refusal (422) says it in its message.
      return refusal(refused.message, refused.statusCode === 400 ? refused.errors : undefined);
    }
    if (outcome.accepted.repeat) repeats++;
    return outcome.accepted.ack;
  });
  return { results: answered, repeat: events.length > 0 && repeats === events.length };
}

export function cancel(deps: Deps, tenant: Tenant, transactionId: string): Promise<boolean> {
  return cancelTrigger(onConnection(deps, deps.db), tenant, transactionId);
}

export type { Recipient };
