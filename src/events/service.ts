import { type Deps, onConnection } from "../deps.ts";
import type { EngineDeps, Recipient, TriggerAck, TriggerRequest } from "../engine/service.ts";
import { acceptTrigger, cancelTrigger } from "../engine/service.ts";
import { ApiError, badRequest, type FieldError } from "../errors.ts";
import type { Tenant } from "../tenancy/tenant.ts";

export const MAX_RECIPIENTS = 100;
export const MAX_DOCUMENT_BYTES = 512 * 1024;
const KNOWN = new Set(["name", "to", "payload", "overrides", "transactionId", "actor", "tenant"]);
const CONTROL = /\p{Cc}/u;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function checkSubscriberId(value: unknown, field: string, errors: FieldError[]): void {
  if (typeof value !== "string") errors.push({ field, message: "must be a string" });
  else if (value.trim() === "") errors.push({ field, message: "must not be empty" });
  else if ([...value].length > 128) errors.push({ field, message: "must be at most 128 characters" });
  else if (CONTROL.test(value)) errors.push({ field, message: "must not contain control characters" });
}

function checkRecipient(value: unknown, field: string, errors: FieldError[]): void {
  if (typeof value === "string") {
    checkSubscriberId(value, field, errors);
    return;
  }
  if (!isObject(value)) {
    errors.push({ field, message: "must be a subscriberId, a subscriber object or a topic" });
    return;
  }
  if (value.type === "Topic") {
    if (typeof value.topicKey !== "string" || value.topicKey === "") {
      errors.push({ field: `${field}.topicKey`, message: "must be a non-empty string" });
    }
    return;
  }
  if (value.subscriberId === undefined) {
    errors.push({
      field: `${field}.subscriberId`,
      message: 'is required (or type: "Topic" with a topicKey)',
    });
    return;
  }
  checkSubscriberId(value.subscriberId, `${field}.subscriberId`, errors);
}

function checkDocument(value: unknown, field: string, errors: FieldError[]): void {
  if (value === undefined) return;
  if (!isObject(value)) errors.push({ field, message: "must be an object" });
  else if (Buffer.byteLength(JSON.stringify(value)) > MAX_DOCUMENT_BYTES) {
    errors.push({ field, message: `must be at most ${MAX_DOCUMENT_BYTES / 1024} KiB as JSON` });
  }
}

/**
 * Reads a trigger body (docs/engine.md, "Triggering and the acknowledgement") or says everything that is
 * wrong with it, field by field. The route's schema already did this for a single trigger; a bulk call's
 * events come here whole, so each can be refused on its own.
 */
export function readTrigger(body: unknown, options: { broadcast?: boolean } = {}): TriggerRequest {
  const errors: FieldError[] = [];
  if (!isObject(body))
    throw badRequest("An event must be an object", [{ field: "body", message: "must be an object" }]);
  for (const key of Object.keys(body)) {
    if (!KNOWN.has(key) || (options.broadcast && key === "to"))
      errors.push({ field: key, message: "is not allowed" });
  }
  if (typeof body.name !== "string" || body.name.trim() === "") {
    errors.push({
      field: "name",
      message: body.name === undefined ? "is required" : "must be a non-empty string",
    });
  }
  if (!options.broadcast) {
    const to = body.to;
    if (to === undefined) errors.push({ field: "to", message: "is required" });
    else if (Array.isArray(to)) {
      if (to.length === 0) errors.push({ field: "to", message: "must name at least one recipient" });
      else if (to.length > MAX_RECIPIENTS)
        errors.push({ field: "to", message: `must have at most ${MAX_RECIPIENTS} items` });
      else
        to.forEach((entry, i) => {
          checkRecipient(entry, `to[${i}]`, errors);
        });
    } else checkRecipient(to, "to", errors);
  }
  checkDocument(body.payload, "payload", errors);
  checkDocument(body.overrides, "overrides", errors);
  if (body.transactionId !== undefined) {
    if (typeof body.transactionId !== "string" || body.transactionId === "")
      errors.push({ field: "transactionId", message: "must be a non-empty string" });
    else if (body.transactionId.length > 255)
      errors.push({ field: "transactionId", message: "must be at most 255 characters" });
  }
  if (body.actor !== undefined) checkRecipient(body.actor, "actor", errors);
  if (body.tenant !== undefined && typeof body.tenant !== "string" && !isObject(body.tenant)) {
    errors.push({ field: "tenant", message: "must be a tenant identifier or an object" });
  }
  const first = errors[0];
  if (first) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see errors)` : "";
    throw badRequest(`${first.field} ${first.message}${more}`, errors);
  }
  return body as unknown as TriggerRequest;
}

/**
 * One trigger. Its route authenticates from memory: the workflow's lookup re-checks the API key,
 * so a revoked key finds no workflow, and its 422 is turned into a 401 (src/auth/key-verifier.ts).
 */
export function trigger(deps: EngineDeps, tenant: Tenant, body: unknown): Promise<TriggerAck> {
  return acceptTrigger(deps, tenant, readTrigger(body), { keyGuarded: true });
}

export function broadcast(deps: EngineDeps, tenant: Tenant, body: unknown): Promise<TriggerAck> {
  const request = readTrigger(body, { broadcast: true });
  return acceptTrigger(deps, tenant, request, { broadcast: true });
}

export type BulkResult = TriggerAck | { acknowledged: false; error: string[] };

/** Up to 100 triggers, each accepted or refused on its own (a refusal carries its messages). */
export async function bulkTrigger(
  deps: EngineDeps,
  tenant: Tenant,
  events: unknown[],
): Promise<BulkResult[]> {
  const results: BulkResult[] = [];
  for (const event of events) {
    try {
      results.push(await trigger(deps, tenant, event));
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      const fields = error.errors?.map((e) => `${e.field} ${e.message}`) ?? [];
      results.push({ acknowledged: false, error: fields.length > 0 ? fields : [error.message] });
    }
  }
  return results;
}

export function cancel(deps: Deps, tenant: Tenant, transactionId: string): Promise<boolean> {
  return cancelTrigger(onConnection(deps, deps.db), tenant, transactionId);
}

export type { Recipient };
