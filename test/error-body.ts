import assert from "node:assert/strict";
import { STATUS_CODES } from "node:http";

// The contract's one error body (part 4), checked in one place: `errorBodyProblem` for code that
// counts problems (the fuzzer, raw socket answers), `assertErrorBody` for every other test.

const ERROR_KEYS = new Set([
  "statusCode",
  "error",
  "message",
  "path",
  "timestamp",
  "type",
  "errors",
  "errorId",
]);
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// What must never reach a client: stack frames, SQL, driver and framework internals.
const INTERNALS =
  /\bat [\w.<>]+ \(|node:internal|\/node_modules\/|\.ts:\d+|SQLITE_|sqlite|postgres|\bselect\s.+\sfrom\b|\binsert into\b|\bupdate\s+\w+\s+set\b|syntax error at or near|FST_ERR|ajv/i;

/** True when the text leaks a stack trace or SQL (any response, error or not). */
export const leaksInternals = (text: string) =>
  /\bat [\w.<>]+ \(|node:internal|SQLITE_|syntax error at or near/.test(text);

/**
 * What is wrong with an error response, without assertions (so a fuzzer can count problems):
 * undefined when it is the contract's one error body. Holds whatever the request was.
 */
export function errorBodyProblem(
  status: number,
  contentType: unknown,
  text: string,
  details: readonly string[] = [],
): string | undefined {
  if (!/^application\/json/.test(String(contentType ?? ""))) return `content-type ${String(contentType)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return "body is not JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body is not an object";
  for (const key of Object.keys(body))
    if (!ERROR_KEYS.has(key) && !details.includes(key)) return `unexpected key ${key}`;
  if (body.statusCode !== status) return `statusCode ${String(body.statusCode)} != ${status}`;
  if (body.error !== STATUS_CODES[status]) return `error ${String(body.error)}`;
  if (typeof body.message !== "string" || body.message === "") return "message missing";
  if (typeof body.path !== "string") return "path missing";
  if (typeof body.timestamp !== "string" || !ISO_UTC.test(body.timestamp))
    return "timestamp not ISO 8601 UTC";
  if (Number.isNaN(Date.parse(body.timestamp))) return "timestamp not a date";
  if (status >= 500 && typeof body.errorId !== "string") return "5xx without errorId";
  if (status < 500 && body.errorId !== undefined) return "errorId on a 4xx";
  // What @novu/api's error models need: a 400 its `type` and list, a 422 its record by field.
  if (status === 400) {
    if (body.type !== "PAYLOAD_VALIDATION_ERROR" && body.type !== "BAD_REQUEST")
      return "400 without its type";
    if (!Array.isArray(body.errors)) return "400 without its errors list";
    for (const e of body.errors as { field?: unknown; message?: unknown }[]) {
      if (typeof e?.field !== "string" || typeof e?.message !== "string") return "errors item shape";
      if (e.message === "") return "errors item without a message";
    }
    if ((body.type === "PAYLOAD_VALIDATION_ERROR") !== body.errors.length > 0)
      return "type does not match errors";
  } else if (status === 422) {
    const errors = body.errors as Record<string, { messages?: unknown }> | undefined;
    if (typeof errors !== "object" || errors === null || Array.isArray(errors))
      return "422 without its errors record";
    for (const entry of Object.values(errors)) {
      if (!Array.isArray(entry?.messages) || !entry.messages.every((m) => typeof m === "string" && m !== ""))
        return "errors record entry shape";
    }
  } else {
    if (body.errors !== undefined) return `errors on a ${status}`;
  }
  if (status !== 400 && body.type !== undefined) return `type on a ${status}`;
  // A field name the request sent is the client's own word, echoed back ("Ajv is not allowed" for a
  // body key "Ajv"): the message is looked at without the fields its errors name.
  const named =
    status === 400
      ? (body.errors as { field: string }[]).map((e) => e.field)
      : status === 422
        ? Object.keys(body.errors as Record<string, unknown>)
        : [];
  const own = named
    .filter((field) => field !== "")
    .reduce((m, field) => m.split(field).join(""), body.message);
  if (INTERNALS.test(own)) return `internals in message: ${body.message}`;
  return undefined;
}

export interface ExpectedError {
  /** The request path the body must report (without the query string). */
  path: string;
  /** A pattern the one-sentence message must match. */
  message?: RegExp;
  /**
   * The field names `errors` must list (a 400's list, a 422's record), in any order; omitted means
   * none (a 400's list is empty, a 422's record has no field, other statuses have no `errors`).
   */
  fields?: string[];
  /** Keys a client's error model needs beside the body's own (a 409 naming what exists). */
  details?: string[];
}

interface ErrorResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * The contract's one error body (part 4): statusCode, error, message, path, timestamp; `errors`
 * for validation errors only; never an internal detail. Also checks X-Request-Id and JSON.
 */
export function assertErrorBody(res: ErrorResponse, status: number, expected: ExpectedError) {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`);
  assert.ok(res.headers["x-request-id"], "X-Request-Id is on every response");
  const problem = errorBodyProblem(status, res.headers["content-type"], res.body, expected.details);
  assert.equal(problem, undefined, `${problem}: ${res.body}`);
  const body = JSON.parse(res.body);
  // The requests here are the tests' own: their messages are one sentence and name nothing inside.
  assert.ok(!body.message.includes("\n"), "message is one sentence");
  assert.doesNotMatch(body.message, /FST_|ajv|sqlite|postgres|stack|undefined/i, "no internals in message");
  if (expected.message) assert.match(body.message, expected.message);
  assert.equal(body.path, expected.path);
  const listed =
    status === 400
      ? (body.errors as { field: string }[]).map((e) => e.field)
      : status === 422
        ? Object.keys(body.errors)
        : [];
  assert.deepEqual([...new Set(listed)].sort(), [...(expected.fields ?? [])].sort(), `errors: ${res.body}`);
}
