import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import * as ajvFormats from "ajv-formats";
import { badRequest, type FieldError } from "../errors.ts";

/**
 * A workflow defined in code declares the JSON Schema of its payload (`payloadSchema` in
 * @novu/framework); a trigger whose payload breaks it is refused with a 400 naming each field,
 * before anything is written, as the framework would refuse it at the first step. Compiled schemas are kept by their text (a few per workflow).
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
function fieldOf(error: ErrorObject): string {
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "required") path.push(String(error.params.missingProperty));
  if (error.keyword === "additionalProperties") path.push(String(error.params.additionalProperty));
  return ["payload", ...path].join(".");
}

function messageOf(error: ErrorObject): string {
  if (error.keyword === "required") return "is required";
  if (error.keyword === "additionalProperties")
    return "is not a property the workflow's payload schema allows";
  return error.message ?? "does not match the workflow's payload schema";
}

/** Refuses a payload that breaks the schema: a 400 whose errors name each field. */
export function requirePayloadSchema(
  schema: Record<string, unknown> | null | undefined,
  payload: unknown,
): void {
  if (!schema) return;
  const validate = validatorOf(schema);
  // A schema ajv cannot compile was the app's to get right; the framework checks the payload again.
  if (validate instanceof Error) return;
  if (validate(structuredClone(payload))) return;
  const errors: FieldError[] = (validate.errors ?? []).map((e) => ({
    field: fieldOf(e),
    message: messageOf(e),
  }));
  const first = errors[0];
  throw badRequest(
    first
      ? `${first.field} ${first.message} (the workflow's payload schema)`
      : "payload does not match the workflow's payload schema",
    errors,
  );
}
