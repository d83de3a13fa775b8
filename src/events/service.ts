import type { KeyClaim } from "../auth/key-claim.ts";
import { type Deps, onConnection } from "../deps.ts";
import type { EngineDeps, Recipient, TriggerAck } from "../engine/service.ts";
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
 * Up to 100 triggers, each accepted or refused on its own, whole (a refusal carries its messages),
 * but held to the environment's quotas together: a call whose events would pass the recipients of
 * the minute or the jobs the environment may have is refused whole (429 with Retry-After; 422 when
 * the call alone is more than a quota allows), and none of its events is accepted.
 */
export async function bulkTrigger(
  deps: EngineDeps,
  tenant: Tenant,
  events: readonly unknown[],
): Promise<BulkResult[]> {
  const results: (BulkResult | undefined)[] = [];
  const valid: TriggerBodyValue[] = [];
  for (const event of events) {
    const problems = eventProblems(event);
    if (problems) results.push(refusal(problems.message, problems.errors));
    else {
      results.push(undefined);
      valid.push(event as TriggerBodyValue);
    }
  }
  const outcomes = (await acceptBulk(deps, tenant, valid)).values();
  return results.map((result) => {
    if (result) return result;
    const outcome = outcomes.next().value;
    if (!outcome) throw new Error("a bulk event has no outcome");
    return "ack" in outcome ? outcome.ack : refusal(outcome.refused.message, outcome.refused.errors);
  });
}

export function cancel(deps: Deps, tenant: Tenant, transactionId: string): Promise<boolean> {
  return cancelTrigger(onConnection(deps, deps.db), tenant, transactionId);
}

export type { Recipient };
