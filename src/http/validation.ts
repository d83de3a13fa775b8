import { Ajv, type ErrorObject } from "ajv";
import * as ajvFormats from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";
import type { FieldError } from "../errors.ts";

// ajv-formats is CommonJS; under ESM its function arrives as the default export's default.
const addFormats = (ajvFormats.default as unknown as { default: (ajv: Ajv) => Ajv }).default;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    // Report every invalid field, not only the first.
    allErrors: true,
    // Unknown fields are refused (additionalProperties: false), never silently dropped.
    removeAdditional: false,
    useDefaults: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

// Bodies are JSON and are taken as typed: "true" is not a boolean. Query strings and path
// parameters are text by nature, so "10" may become 10 there.
const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

/**
 * How deeply a body may nest objects and arrays. Free-form members (a workflow's `data`, a step's
 * `template`) would otherwise accept any depth, and a few thousand levels overflow the stack of
 * JSON.stringify when the document is stored: a 500 for what is a bad input.
 */
export const MAX_BODY_DEPTH = 32;

export interface BodyProblem {
  /** The JSON pointer of the offending value. */
  pointer: string;
  problem: "depth" | "nul";
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** A container met on the way down, with how it was reached (its pointer is built only for a problem). */
interface Visit {
  value: object;
  depth: number;
  parent: Visit | undefined;
  key: string;
}

function pointerOf(parent: Visit | undefined, key: string): string {
  const keys = [key];
  for (let at = parent; at?.parent !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().reduce((pointer, part) => `${pointer}/${escapePointer(part)}`, "");
}

/**
 * What the schema cannot say about a body: a container nested deeper than `limit`, or a string
 * holding U+0000, which PostgreSQL cannot store in a text column (SQLite can: the two backends
 * would disagree). Iterative, so a hostile body cannot overflow the stack here either; every
 * request's body goes through it, so nothing is built for a value that has no problem.
 */
export function inspectBody(value: unknown, limit = MAX_BODY_DEPTH): BodyProblem | undefined {
  if (typeof value === "string")
    return value.includes("\u0000") ? { pointer: "", problem: "nul" } : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const stack: Visit[] = [{ value, depth: 1, parent: undefined, key: "" }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    if (visit.depth > limit)
      return { pointer: visit.parent ? pointerOf(visit.parent, visit.key) : "", problem: "depth" };
    const container = visit.value as Record<string, unknown>;
    for (const key of Object.keys(container)) {
      const child = container[key];
      if (typeof child === "string") {
        if (child.includes("\u0000")) return { pointer: pointerOf(visit, key), problem: "nul" };
      } else if (typeof child === "object" && child !== null)
        stack.push({ value: child, depth: visit.depth + 1, parent: visit, key });
    }
  }
  return undefined;
}

/** The pointer cut after its first member and the indexes right after it: `/steps/0/template/a/b` → `/steps/0`. */
function memberOf(pointer: string): string {
  const [, first = "", ...rest] = pointer.split("/");
  const indexes: string[] = [];
  for (const part of rest) {
    if (!/^\d+$/.test(part)) break;
    indexes.push(part);
  }
  return ["", first, ...indexes].join("/");
}

function bodyProblemError(found: BodyProblem): ErrorObject {
  return found.problem === "depth"
    ? {
        // At the member that holds the deep part: the full path is more than 32 levels long.
        keyword: "maxDepth",
        instancePath: memberOf(found.pointer),
        schemaPath: "#",
        params: { limit: MAX_BODY_DEPTH },
        message: `must not nest objects and arrays more than ${MAX_BODY_DEPTH} levels deep`,
      }
    : {
        keyword: "noNul",
        instancePath: found.pointer,
        schemaPath: "#",
        params: {},
        message: "must not contain the NUL character (\\u0000)",
      };
}

type BodyValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Every part of a request (body, query string, path) is checked by its schema first (its errors
 * name the fields best), then for what the schema cannot express: a NUL anywhere (a query string
 * can carry `%00` as well as a body can), and, in bodies, nesting too deep to store.
 */
function compileChecked(ajv: Ajv, schema: object): BodyValidator {
  const validate = ajv.compile(schema);
  const checked: BodyValidator = (data) => {
    const valid = validate(data);
    checked.errors = validate.errors;
    if (!valid) return false;
    const found = inspectBody(data);
    if (!found) return true;
    checked.errors = [bodyProblemError(found)];
    return false;
  };
  return checked;
}

/**
 * The routes' validators, one per schema (by its text, and whether it judges a body or text), shared
 * by every app a process builds, and each compiled on its first use: a process compiles only the
 * schemas of the routes it serves (a start compiled all of them, about a third of its CPU), and the
 * test suite's many apps compile none twice. compileAllSchemas compiles what is still pending (the
 * test that every route's schema compiles).
 */
const validators = new Map<string, BodyValidator>();

function lazyValidator(ajv: Ajv, schema: object): BodyValidator {
  let compiled: BodyValidator | undefined;
  const validator: BodyValidator = (data) => {
    compiled ??= compileChecked(ajv, schema);
    const valid = compiled(data);
    validator.errors = compiled.errors;
    return valid;
  };
  pendingCompiles.add(() => {
    compiled ??= compileChecked(ajv, schema);
  });
  return validator;
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const body = httpPart === "body";
  const key = `${body ? "body" : "text"} ${JSON.stringify(schema)}`;
  let validator = validators.get(key);
  if (validator === undefined) {
    validator = lazyValidator(body ? bodyAjv : textAjv, schema);
    validators.set(key, validator);
  }
  return validator;
};

/** The compilations not yet done (validators here, serializers in serialization.ts). */
export const pendingCompiles = new Set<() => void>();

/** Compiles every route schema seen so far that no request has needed yet; how many there were. */
export function compileAllSchemas(): number {
  const pending = [...pendingCompiles];
  pendingCompiles.clear();
  for (const compile of pending) compile();
  return pending.length;
}

/** What is wrong with a value, as the error body says it; undefined when nothing is. */
export type Problems = { message: string; errors: FieldError[] } | undefined;

/**
 * A body schema compiled as the routes' own are (same Ajv, same checks, same messages), for a piece
 * of a body that is judged on its own: each event of a bulk trigger is accepted or refused alone.
 * `context` names a piece that is wrong as a whole ("event must be an object").
 */
export function compileBodyCheck(schema: object, context: string): (value: unknown) => Problems {
  // Compiled on first use, as the routes' validators are (a bulk trigger's schema is a large one).
  const checked = lazyValidator(bodyAjv, schema);
  return (value) => (checked(value) ? undefined : describeValidation(checked.errors ?? [], context));
}

/** `/steps/2/filters/0` → `steps[2].filters[0]` */
function fieldPath(pointer: string, child?: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (child !== undefined) parts.push(child);
  let path = "";
  for (const part of parts) {
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else path += path === "" ? part : `.${part}`;
  }
  return path;
}

/** Subscriber ids in paths: 1–128 characters, none of them a control character. */
export const SUBSCRIBER_ID_PATTERN = "^[^\\p{Cc}]{1,128}$";
/**
 * Subscriber ids in bodies, where nothing has trimmed them: as in paths, and not only whitespace,
 * and no lone surrogate (a broken escape in the JSON, which is not text). Counted in code points.
 */
export const SUBSCRIBER_ID_TEXT_PATTERN = "^(?!\\s*$)[^\\p{Cc}\\p{Cs}]{1,128}$";
/** Text with something in it: not empty, not only whitespace. */
export const NOT_BLANK_PATTERN = "\\S";
/** Topic keys, in bodies and paths. */
export const TOPIC_KEY_PATTERN = "^[A-Za-z0-9_:.-]{1,100}$";

/** What each pattern a schema uses means, in words (Ajv only knows the regular expression). */
const PATTERN_PROBLEMS: Record<string, string> = {
  "^[0-9a-f]{24}$": "must be an id of 24 lowercase hex characters",
  [SUBSCRIBER_ID_PATTERN]: "must be 1–128 characters without control characters",
  [SUBSCRIBER_ID_TEXT_PATTERN]:
    "must be 1–128 characters of valid Unicode text, not only whitespace, without control characters",
  [NOT_BLANK_PATTERN]: "must not be empty or only whitespace",
  [TOPIC_KEY_PATTERN]: "must be 1–100 letters, digits or the characters _ : . -",
};

const ARTICLE: Record<string, string> = {
  boolean: "a boolean",
  string: "a string",
  object: "an object",
  array: "an array",
  integer: "an integer",
  number: "a number",
  null: "null",
};

function problem(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not allowed";
    case "type": {
      const types = String(params.type).split(",");
      return `must be ${types.map((t) => ARTICLE[t] ?? t).join(" or ")}`;
    }
    case "enum":
      return `must be one of: ${(params.allowedValues as unknown[]).map(String).join(", ")}`;
    case "pattern":
      return (
        PATTERN_PROBLEMS[String(params.pattern)] ??
        "must contain only letters, digits, hyphens and underscores (at most 100)"
      );
    case "minLength":
      return params.limit === 1 ? "must not be empty" : `must be at least ${String(params.limit)} characters`;
    case "maxLength":
      return `must be at most ${String(params.limit)} characters`;
    case "maxItems":
      return `must have at most ${String(params.limit)} items`;
    case "minItems":
      return `must have at least ${String(params.limit)} ${params.limit === 1 ? "item" : "items"}`;
    case "format":
      return `must be a valid ${String(params.format)}`;
    default:
      return error.message ?? "is invalid";
  }
}

const PART_NAMES: Record<string, string> = {
  body: "body",
  params: "path",
  querystring: "query",
  headers: "headers",
};

/** Turns Ajv's errors into the error body's `errors` list and one human sentence. */
export function describeValidation(
  errors: readonly ErrorObject[],
  context: string,
): { message: string; errors: FieldError[] } {
  const fields: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // anyOf/oneOf wrappers only repeat what their branches said.
    if (error.keyword === "anyOf" || error.keyword === "oneOf" || error.keyword === "if") continue;
    const params = error.params as Record<string, unknown>;
    const child =
      error.keyword === "required"
        ? String(params.missingProperty)
        : error.keyword === "additionalProperties"
          ? String(params.additionalProperty)
          : undefined;
    const field = fieldPath(error.instancePath, child) || (PART_NAMES[context] ?? context);
    const message = problem(error);
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    fields.push({ field, message });
  }
  const first = fields[0];
  if (!first) return { message: "The request is invalid", errors: [] };
  let message =
    first.field === "body" ? `The request body ${first.message}` : `${first.field} ${first.message}`;
  if (fields.length > 1) message += ` (and ${fields.length - 1} more: see errors)`;
  return { message, errors: fields };
}
