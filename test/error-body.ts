import assert from "node:assert/strict";
import { STATUS_CODES } from "node:http";

// The contract's one error body (part 4), checked in one place: `errorBodyProblem` for code that
// counts problems (the fuzzer, raw socket answers), `assertErrorBody` for every other test.

const ERROR_KEYS = new Set(["statusCode", "error", "message", "path", "timestamp", "errors", "errorId"]);
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
export function errorBodyProblem(status: number, contentType: unknown, text: string): string | undefined {
  if (!/^application\/json/.test(String(contentType ?? ""))) return `content-type ${String(contentType)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return "body is not JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body is not an object";
  for (const key of Object.keys(body)) if (!ERROR_KEYS.has(key)) return `unexpected key ${key}`;
  if (body.statusCode !== status) return `statusCode ${String(body.statusCode)} != ${status}`;
  if (body.error !== STATUS_CODES[status]) return `error ${String(body.error)}`;
  if (typeof body.message !== "string" || body.message === "") return "message missing";
  if (typeof body.path !== "string") return "path missing";
  if (typeof body.timestamp !== "string" || !ISO_UTC.test(body.timestamp))
    return "timestamp not ISO 8601 UTC";
  if (Number.isNaN(Date.parse(body.timestamp))) return "timestamp not a date";
  if (status >= 500 && typeof body.errorId !== "string") return "5xx without errorId";
  if (status < 500 && body.errorId !== undefined) return "errorId on a 4xx";
  if (body.errors !== undefined) {
    if (!Array.isArray(body.errors)) return "errors is not an array";
    for (const e of body.errors as { field?: unknown; message?: unknown }[]) {
      if (typeof e?.field !== "string" || typeof e?.message !== "string") return "errors item shape";
      if (e.message === "") return "errors item without a message";
    }
  }
  if (INTERNALS.test(body.message)) return `internals in message: ${body.message}`;
  return undefined;
}

export interface ExpectedError {
  /** The request path the body must report (without the query string). */
  path: string;
  /** A pattern the one-sentence message must match. */
  message?: RegExp;
  /**
   * The field names `errors` must list, in any order; omitted means the response must carry no
   * `errors` (it is not a validation error).
   */
  fields?: string[];
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
  const problem = errorBodyProblem(status, res.headers["content-type"], res.body);
  assert.equal(problem, undefined, `${problem}: ${res.body}`);
  const body = JSON.parse(res.body);
  // The requests here are the tests' own: their messages are one sentence and name nothing inside.
  assert.ok(!body.message.includes("\n"), "message is one sentence");
  assert.doesNotMatch(body.message, /FST_|ajv|sqlite|postgres|stack|undefined/i, "no internals in message");
  if (expected.message) assert.match(body.message, expected.message);
  assert.equal(body.path, expected.path);
  if (expected.fields === undefined) {
    assert.equal(body.errors, undefined, `no errors list expected: ${res.body}`);
  } else {
    assert.ok(Array.isArray(body.errors), `errors list expected: ${res.body}`);
    const fields = body.errors.map((e: { field: string }) => e.field);
    assert.deepEqual([...new Set(fields)].sort(), [...expected.fields].sort());
  }
}
