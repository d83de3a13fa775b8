import assert from "node:assert/strict";
import { STATUS_CODES } from "node:http";
import type { LightMyRequestResponse } from "fastify";

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

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

/**
 * The contract's one error body (part 4): statusCode, error, message, path, timestamp; `errors`
 * for validation errors only; never an internal detail. Also checks X-Request-Id and JSON.
 */
export function assertErrorBody(res: LightMyRequestResponse, status: number, expected: ExpectedError) {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  assert.ok(res.headers["x-request-id"], "X-Request-Id is on every response");
  const body = res.json();
  const allowed = new Set(["statusCode", "error", "message", "path", "timestamp", "errors", "errorId"]);
  for (const key of Object.keys(body)) assert.ok(allowed.has(key), `unexpected key ${key} in ${res.body}`);
  assert.equal(body.statusCode, status);
  assert.equal(body.error, STATUS_CODES[status]);
  assert.equal(typeof body.message, "string");
  assert.ok(body.message.length > 0 && !body.message.includes("\n"), "message is one sentence");
  assert.doesNotMatch(body.message, /FST_|ajv|sqlite|postgres|stack|undefined/i, "no internals in message");
  if (expected.message) assert.match(body.message, expected.message);
  assert.equal(body.path, expected.path);
  assert.match(body.timestamp, ISO_UTC);
  assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
  if (status < 500) assert.equal(body.errorId, undefined, "errorId only on 5xx");
  if (expected.fields === undefined) {
    assert.equal(body.errors, undefined, `no errors list expected: ${res.body}`);
  } else {
    assert.ok(Array.isArray(body.errors), `errors list expected: ${res.body}`);
    for (const error of body.errors) {
      assert.equal(typeof error.field, "string");
      assert.equal(typeof error.message, "string");
      assert.ok(error.message.length > 0);
    }
    const fields = body.errors.map((e: { field: string }) => e.field);
    assert.deepEqual([...new Set(fields)].sort(), [...expected.fields].sort());
  }
}
