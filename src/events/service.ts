import type { KeyClaim } from "../auth/key-claim.ts";
import { type Deps, onConnection } from "../deps.ts";
import type { EngineDeps, Recipient, TriggerAck } from "../engine/service.ts";
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
 * One trigger, its body validated by the route's schema. Its route authenticates from memory
 * (src/auth/key-verifier.ts): the claim is confirmed by the statement that finds the workflow.
 */
export function trigger(deps: EngineDeps, claim: KeyClaim, body: TriggerBodyValue): Promise<TriggerAck> {
  requireDocumentSizes(body);
  return acceptTrigger(deps, claim, body);
}

export function broadcast(deps: EngineDeps, tenant: Tenant, body: BroadcastBodyValue): Promise<TriggerAck> {
  requireDocumentSizes(body);
  return acceptTrigger(deps, tenant, body, { broadcast: true });
}

export type BulkResult = TriggerAck | { acknowledged: false; error: string[] };

const checkEvent = compileBodyCheck(TriggerBody, "event");

/** What is wrong with one event of a bulk trigger: what its schema says, else its documents' sizes. */
function eventProblems(event: unknown): Problems {
  return checkEvent(event) ?? documentSizeProblems(event as TriggerBodyValue);
}

const refusal = (message: string, errors: readonly FieldError[] = []): BulkResult => ({
  acknowledged: false,
  error: errors.length > 0 ? errors.map((e) => `${e.field} ${e.message}`) : [message],
});

/**
 * Up to 100 triggers, each accepted or refused on its own, whole (a refusal carries its messages):
 * an event past a quota is refused and the others stand. `retryAfter`: the longest Retry-After of
 * the events a quota refused for now (429), in seconds.
 */
export async function bulkTrigger(
  deps: EngineDeps,
  tenant: Tenant,
  events: readonly unknown[],
): Promise<{ results: BulkResult[]; retryAfter?: number }> {
  const results: BulkResult[] = [];
  let retryAfter: number | undefined;
  for (const event of events) {
    const problems = eventProblems(event);
    if (problems) {
      results.push(refusal(problems.message, problems.errors));
      continue;
    }
    try {
      results.push(await acceptTrigger(deps, tenant, event as TriggerBodyValue));
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      results.push(refusal(error.message, error.errors));
      const wait = Number(error.headers?.["retry-after"]);
      if (error.statusCode === 429 && wait > 0) retryAfter = Math.max(retryAfter ?? 0, wait);
    }
  }
  return retryAfter === undefined ? { results } : { results, retryAfter };
}

export function cancel(deps: Deps, tenant: Tenant, transactionId: string): Promise<boolean> {
  return cancelTrigger(onConnection(deps, deps.db), tenant, transactionId);
}

export type { Recipient };
