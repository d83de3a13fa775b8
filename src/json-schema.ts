import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import * as ajvFormats from "ajv-formats";
import { badRequest, type FieldError } from "./errors.ts";

/**
 * JSON Schemas that a code-first app declares (docs/bridge.md): a workflow's payload schema, which a
 * trigger's payload must match, and a step's control schema, which its stored control values must
 * match. Checked as the framework checks them, so that what the app would refuse is refused here at
 * once, with a 400 naming each field, before anything is written. Compiled schemas are kept by their
 * text (a few per workflow).
 */

// As the framework checks a payload: properties a schema does not allow are dropped rather than
// refused, and defaults fill what is missing (on a copy: the payload is stored as sent).
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, removeAdditional: "failing" });
(ajvFormats.default as unknown as { default: (ajv: Ajv) => Ajv }).default(ajv);

const compiled = new Map<string, ValidateFunction | Error>();
const MAX_KEPT = 1_000;

function validatorOf(schema: Record<string, unknown>): ValidateFunction | Error {
  const text = JSON.stringify(schema);
  let found = compiled.get(text);
  if (found === undefined) {
    try {
      found = ajv.compile(schema);
    } catch (error) {
      found = error instanceof Error ? error : new Error(String(error));
    }
    if (compiled.size >= MAX_KEPT) compiled.clear();
    compiled.set(text, found);
  }
  return found;
}

/** `payload.a.b` for ajv's `/a/b`, and the field a `required` error is about. */
function fieldOf(error: ErrorObject, root: string): string {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "required") path.push(String(error.params.missingProperty));
  if (error.keyword === "additionalProperties") path.push(String(error.params.additionalProperty));
  return [root, ...path].join(".");
}

function messageOf(error: ErrorObject, what: string): string {
  if (error.keyword === "required") return "is required";
  if (error.keyword === "additionalProperties") return `is not a property ${what} allows`;
  return error.message ?? `does not match ${what}`;
}

/**
 * Refuses a value that breaks the schema: a 400 whose errors name each field from `root`
 * (`payload.name`), and whose message says which schema (`the workflow's payload schema`).
 */
export function requireSchema(
  schema: Record<string, unknown> | null | undefined,
  value: unknown,
  root: string,
  what: string,
): void {
  if (!schema) return;
  const validate = validatorOf(schema);
  // A schema ajv cannot compile was the app's to get right; the framework checks the value again.
  if (validate instanceof Error) return;
  if (validate(structuredClone(value))) return;
  const errors: FieldError[] = (validate.errors ?? []).map((e) => ({
    field: fieldOf(e, root),
    message: messageOf(e, what),
  }));
  const first = errors[0];
  throw badRequest(
    first ? `${first.field} ${first.message} (${what})` : `${root} does not match ${what}`,
    errors,
  );
}

/** Refuses a trigger's payload that breaks its workflow's payload schema. */
export const requirePayloadSchema = (schema: Record<string, unknown> | null | undefined, payload: unknown) =>
  requireSchema(schema, payload, "payload", "the workflow's payload schema");
