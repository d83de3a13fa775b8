import { badRequest, type FieldError } from "../errors.ts";
import type { Step } from "../workflows/domain.ts";

/**
 * The variables a step's template declares (`template.variables`, Novu's ITemplateVariable: `name`,
 * `type` String, Array or Boolean, `required`, `defaultValue`), checked against a trigger's payload
 * as Novu checks them: a required variable the payload lacks (or holds with the wrong type) refuses
 * the trigger with a 400, and a `defaultValue` fills what the payload leaves out.
 */
export interface DeclaredVariable {
  name: string;
  type: string;
  required: boolean;
  defaultValue: unknown;
}

/** Novu's system roots: variables under them come from the engine, never from the payload. */
const SYSTEM_ROOTS = new Set(["subscriber", "step", "branding", "tenant", "preheader", "actor"]);
const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const MAX_VARIABLES = 500;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The declared variables of the steps, read defensively: a template stores what it was sent. */
export function declaredVariables(steps: readonly Pick<Step, "template">[]): DeclaredVariable[] {
  const found: DeclaredVariable[] = [];
  for (const step of steps) {
    const list = step.template.variables;
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (found.length >= MAX_VARIABLES) return found;
      if (!isRecord(item) || typeof item.name !== "string" || item.name === "") continue;
      const path = item.name.split(".");
      if (SYSTEM_ROOTS.has(path[0] ?? "") || path.some((key) => key === "" || UNSAFE_KEYS.has(key))) continue;
      found.push({
        name: item.name,
        type: typeof item.type === "string" ? item.type : "",
        required: item.required === true,
        defaultValue: item.defaultValue,
      });
    }
  }
  return found;
}

/** The value at a dot path, through own properties only. */
function valueAt(payload: Record<string, unknown>, name: string): unknown {
  let current: unknown = payload;
  for (const key of name.split(".")) {
    if (!isRecord(current) && !Array.isArray(current)) return undefined;
    if (!Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const TYPE_WORD: Record<string, string> = { String: "Value", Array: "Array", Boolean: "Boolean" };

/** Whether a required variable's value will do: a String takes a string or a number, as in Novu. */
function satisfies(variable: DeclaredVariable, value: unknown): boolean {
  switch (variable.type) {
    case "Array":
      return Array.isArray(value);
    case "Boolean":
      return typeof value === "boolean";
    case "String":
      return typeof value === "string" || typeof value === "number";
    default:
      return value !== undefined && value !== null;
  }
}

/** Refuses a payload that lacks a required variable, naming each with its type in Novu's words. */
export function requireVariables(
  variables: readonly DeclaredVariable[],
  payload: Record<string, unknown>,
): void {
  const missing = variables.filter((v) => v.required && !satisfies(v, valueAt(payload, v.name)));
  if (missing.length === 0) return;
  const described = missing.map((v) => `${v.name} (${TYPE_WORD[v.type] ?? v.type})`);
  const errors: FieldError[] = missing.map((v) => ({
    field: `payload.${v.name}`,
    message: `is required${v.type ? ` (${TYPE_WORD[v.type] ?? v.type})` : ""}`,
  }));
  throw badRequest(
    `payload is missing required key(s) and type(s): ${[...new Set(described)].join(", ")}`,
    errors,
  );
}

/** Sets `value` at a dot path of `target`, making the objects on the way; a plain value in the way wins. */
function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let current = target;
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(current, key) ? current[key] : undefined;
    if (next === undefined) current[key] = {};
    else if (!isRecord(next)) return;
    current = current[key] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (last !== undefined && !Object.hasOwn(current, last)) current[last] = value;
}

/**
 * The payload with the declared defaults where it has nothing: the payload's own values always win
 * (an empty-string default sets nothing, as in Novu). The payload itself is not changed.
 */
export function withDefaults(
  variables: readonly DeclaredVariable[],
  payload: Record<string, unknown>,
): Record<string, unknown> {
  const defaults = variables.filter(
    (v) => v.defaultValue !== undefined && v.defaultValue !== null && v.defaultValue !== "",
  );
  if (defaults.length === 0) return payload;
  const filled = structuredClone(payload);
  for (const variable of defaults) {
    if (valueAt(filled, variable.name) !== undefined) continue;
    setAt(filled, variable.name.split("."), variable.defaultValue);
  }
  return filled;
}
