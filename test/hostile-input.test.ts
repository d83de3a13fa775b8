// Proof 3 (issue 4): hostile input. A fast-check fuzzer sends FUZZ_REQUESTS generated requests per
// backend (1,000 in `npm test`; 10,000 in `npm run test:reliability`) to every route of the catalog,
// each route in turn (random and mutated JSON, wrong
// types, deep nesting, huge strings, unicode tricks, SQL and path traversal in ids, names and
// queries, wrong methods and content types, header garbage), in process through app.inject; then
// raw bytes over a real socket for what inject cannot send (invalid UTF-8, broken HTTP). Zero 5xx,
// the process keeps answering, and every error is the contract's one body with nothing internal in it.
// Then (issue 23) one generated attack for 20 of those requests on the limits a hostile tenant meets
// (test/fuzz-limits.ts): runaway and oversized templates, oversized payloads, webhooks and SMTP hosts
// at internal addresses (a listener of ours there must get nothing), the integration's mask sent with
// a new server, inbox sessions without a valid HMAC, and triggers past the quotas; every answer keeps
// the invariants above and those of its attack, and the run as a whole keeps its own (nothing stored
// over the render cap, no secret in an answer or a log line, the quotas held).
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import fc from "fast-check";
import type { InjectOptions } from "fastify";
import { ManualClock } from "../src/clock.ts";
import { loadConfig } from "../src/config.ts";
import type { App } from "../src/http/types.ts";
import { createLogger } from "../src/ops/logging.ts";
import { errorBodyProblem, leaksInternals } from "./error-body.ts";
import {
  attack,
  exchangeProblem,
  LIMITS,
  LIMITS_ENV,
  makeLimitFixtures,
  minuteCount,
  notificationsOf,
  runAttack,
  runProblems,
  startInternalListener,
} from "./fuzz-limits.ts";
import { forEachBackend } from "./harness.ts";
import { appWith } from "./ops-helpers.ts";
import { OBJECT_ID_SOURCE } from "./patterns.ts";
import { drain } from "./queue-helpers.ts";
import { type CatalogRoute, type Fixtures, makeFixtures, ROUTES } from "./route-catalog.ts";

/** encodeURIComponent that takes lone surrogates too (as U+FFFD), as a client library would. */
const encode = (s: string) =>
  encodeURIComponent(
    s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"),
  );

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1_000);
/** Attacks on the limits: one for 20 requests (each is one or two requests, some of them renders). */
const ATTACKS = Math.max(100, Math.round(REQUESTS / 20));
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

const HOSTILE_IDS = [
  "' OR '1'='1",
  "1; DROP TABLE workflows; --",
  '" OR ""="',
  "1 UNION SELECT key_hash FROM api_keys --",
  "../../../../etc/passwd",
  "..%2F..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f%2e%2e%2f",
  "..\\..\\windows\\win.ini",
  "%00",
  "abc%00def",
  "%ZZ",
  "%",
  "%c0%ae%c0%ae%2f",
  "%E2%80%AE",
  "%F0%9F%92%A9",
  "ＡＢＣＤ",
  "000000000000000000000000",
  "FFFFFFFFFFFFFFFFFFFFFFFF",
  "65f0000000000000000000000",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "$where",
  '{"$gt":""}',
  "%7B%22%24ne%22%3Anull%7D",
  "a".repeat(199),
  "a".repeat(201),
  "a".repeat(5000),
  "*",
  "%20",
  "-1",
  "1e400",
];

const UNICODE_TRICKS = [
  "\u202eevil\u202c",
  "Zero\u200bWidth\u200d",
  "e\u0301\u0301\u0301\u0301",
  "\u0000nul",
  "\ud800",
  "\udfff\ud800",
  "\uffff\ufffe",
  "🙂".repeat(50),
  "ﬁ ligature ǅ",
  "\u0130stanbul",
  "ß".repeat(60),
  "\u00a0\u2028\u2029",
  "<script>alert(1)</script>",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell-style probe, meant literally
  "${jndi:ldap://x}",
  "{{7*7}}",
  "%s%s%s%n",
  // Templates that loop without end, and addresses inside (test/fuzz-limits.ts sends them where they matter).
  "{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}x{{/each}}{{/each}}{{/each}}{{/each}}",
  "{{#a}}{{#../a}}{{#../../a}}{{json @root}}{{/../../a}}{{/../a}}{{/a}}",
  "http://127.0.0.1:6379/",
  "http://169.254.169.254/latest/meta-data/",
  "http://[::ffff:127.0.0.1]/",
  "http://0.0.0.0:22/",
];

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=latin1",
  "APPLICATION/JSON",
  "application/json, text/plain",
  "application/jsonx",
  "text/plain",
  "text/html",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/octet-stream",
  "",
  ";;;",
  "application/json; boundary=\u0000",
];

const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_IDS, ...UNICODE_TRICKS),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.nat({ max: 300_000 }).map((n) => "x".repeat(n)),
);

/** A JSON text the parser will take apart: random values, deep nesting, huge or odd numbers. */
const nastyJsonText = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.integer({ min: 100, max: 100_000 }).map((d) => `${"[".repeat(d)}${"]".repeat(d)}`),
  fc.integer({ min: 100, max: 50_000 }).map((d) => `{"name":${'{"a":'.repeat(d)}1${"}".repeat(d)}}`),
  fc.integer({ min: 100, max: 50_000 }).map((d) => `{"active":${"[".repeat(d)}true${"]".repeat(d)}}`),
  fc.constantFrom(
    '{"active": 1e400}',
    '{"active": -0}',
    '{"name": 123456789012345678901234567890}',
    '{"__proto__": {"admin": true}, "name": "proto"}',
    '{"constructor": {"prototype": {"admin": true}}}',
    '{"name": "a", "name": "b"}',
    '{"name": "\\ud800"}',
    '{"name": "\\u0000"}',
    "{",
    "[1,2,",
    '{"name":}',
    "null",
    "true",
    '"string"',
    "0",
    "",
    " ",
    "\u0000",
    "\ufeff{}",
    "NaN",
    "{'name': 'single quotes'}",
  ),
  fc.string({ maxLength: 200 }),
  fc.nat({ max: 1_300_000 }).map((n) => JSON.stringify({ name: "y".repeat(n) })),
);

/** A route's valid body with one thing wrong: a field of another type, missing, or unknown. */
function mutatedBody(valid: Record<string, unknown>) {
  const keys = Object.keys(valid);
  return fc
    .record({
      action: fc.constantFrom("retype", "drop", "add", "hostile", "deepen"),
      key: keys.length > 0 ? fc.constantFrom(...keys) : fc.constant("name"),
      value: fc.jsonValue({ maxDepth: 3 }),
      extra: fc.string({ maxLength: 20 }),
      hostile: hostileString,
    })
    .map(({ action, key, value, extra, hostile }) => {
      const body: Record<string, unknown> = structuredClone(valid);
      if (action === "retype") body[key] = value;
      else if (action === "drop") delete body[key];
      else if (action === "add") body[extra || "unknownField"] = value;
      else if (action === "hostile") body[key] = hostile;
      else body[key] = { nested: [body[key], { deeper: [value] }] };
      return JSON.stringify(body);
    });
}

interface Generated {
  route: CatalogRoute;
  method: string;
  idSegment: string | undefined;
  query: string;
  contentType: string | undefined;
  auth: "valid" | "other" | "garbage" | "none";
  garbageAuth: string;
  idempotencyKey: string | undefined;
  requestId: string | undefined;
  body: "none" | "valid" | "mutated" | "nasty";
  nasty: string;
  mutation: fc.Arbitrary<string> | undefined;
  pick: number;
}

// Everything of a request but its route, which the routes take in turn (see the test).
const generated = fc.record({
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant("") },
    { weight: 2, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS") },
  ),
  idSegment: fc.option(hostileString, { freq: 3 }),
  query: fc.oneof(
    { weight: 6, arbitrary: fc.constant("") },
    {
      weight: 2,
      arbitrary: fc
        .array(
          fc.tuple(
            fc.constantFrom("page", "limit", "query", "__proto__[x]", "limit[]", "apiKey", "$where"),
            hostileString.map((s) => encode(s.slice(0, 500)).replace(/%25/g, "%")),
          ),
          { maxLength: 4 },
        )
        .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`),
    },
  ),
  contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 5 }),
  auth: fc.constantFrom("valid", "valid", "valid", "valid", "valid", "valid", "other", "garbage", "none"),
  garbageAuth: fc.oneof(
    fc.constantFrom(
      "ApiKey",
      "Bearer x",
      "ApiKey tid_sk_",
      "apikey  tid_sk_\u0000",
      "Basic YTpi",
      "ApiKey a b",
    ),
    fc.string({ maxLength: 50 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
    fc.nat({ max: 4000 }).map((n) => `ApiKey ${"k".repeat(n)}`),
  ),
  idempotencyKey: fc.option(
    fc.oneof(
      fc.uuid(),
      fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x21-\x7e]/g, "k")),
      fc.constant("k".repeat(300)),
    ),
    { freq: 4 },
  ),
  requestId: fc.option(fc.constantFrom("x".repeat(500), "a b", "<script>", "ok-id-1", "../../"), { freq: 6 }),
  body: fc.constantFrom("none", "valid", "mutated", "mutated", "nasty", "nasty"),
  nasty: nastyJsonText,
  pick: fc.nat(),
}) as unknown as fc.Arbitrary<Omit<Generated, "route">>;

/** The ObjectId segment of a catalogued URL, which the fuzzer replaces. */
const ID_SEGMENT = new RegExp(`/${OBJECT_ID_SOURCE}(?=/|$|\\?)`);

/** The inject options for one generated request against the current fixtures. */
function toRequest(g: Generated, f: Fixtures, otherKey: string): InjectOptions {
  let url = g.route.url(f);
  if (g.idSegment !== undefined && g.idSegment !== null && /:\w+/.test(g.route.path)) {
    const raw = g.idSegment;
    // Half the time as a client would encode it, half the time raw (as a hostile client might).
    const segment = g.pick % 2 === 0 ? encode(raw) : raw.replace(/[/?#]/g, (c) => encode(c));
    url = url.replace(ID_SEGMENT, `/${segment}`);
  }
  url = url.includes("?") && g.query ? url + g.query.replace("?", "&") : url + g.query;
  const method = (g.method || g.route.method) as InjectOptions["method"];
  const headers: Record<string, string> = {};
  if (g.auth === "valid") headers.authorization = `ApiKey ${f.tenant.dev.apiKey}`;
  else if (g.auth === "other") headers.authorization = `ApiKey ${otherKey}`;
  else if (g.auth === "garbage") headers.authorization = g.garbageAuth;
  if (g.idempotencyKey) headers["idempotency-key"] = g.idempotencyKey;
  if (g.requestId) headers["x-request-id"] = g.requestId;
  let payload: string | undefined;
  const valid = g.route.body?.(f) ?? { name: "fuzz" };
  if (g.body === "valid") payload = JSON.stringify(valid);
  else if (g.body === "mutated") payload = fc.sample(mutatedBody(valid), { numRuns: 1, seed: g.pick })[0];
  else if (g.body === "nasty") payload = g.nasty;
  if (payload !== undefined) headers["content-type"] = g.contentType ?? "application/json";
  else if (g.contentType) headers["content-type"] = g.contentType;
  return { method, url, headers, ...(payload !== undefined ? { payload } : {}) };
}

/** What is wrong with a response, if anything (undefined when it is a proper answer). */
function problemWith(
  method: string,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
) {
  if (res.statusCode >= 500) return `${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (!res.headers["x-request-id"]) return "no X-Request-Id";
  if (leaksInternals(res.body)) return `internals leaked: ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 400 && method !== "HEAD") {
    const shape = errorBodyProblem(res.statusCode, res.headers["content-type"], res.body);
    if (shape) return `${res.statusCode} error body: ${shape}: ${res.body.slice(0, 200)}`;
  }
  return undefined;
}

/**
 * Sends raw bytes; resolves with what came back once the server closed, or was quiet for 300 ms after
 * answering (a kept-alive connection), or 4 s passed.
 */
function rawExchange(port: number, bytes: Buffer | string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, "127.0.0.1", () => socket.write(bytes));
    const done = () => resolve(Buffer.concat(chunks).toString("latin1"));
    let quiet: NodeJS.Timeout | undefined;
    const limit = setTimeout(() => socket.destroy(), 4000);
    socket.on("close", () => {
      clearTimeout(limit);
      clearTimeout(quiet);
    });
    socket.on("data", (d) => {
      chunks.push(d);
      clearTimeout(quiet);
      quiet = setTimeout(() => socket.destroy(), 300);
    });
    socket.on("error", done);
    socket.on("close", done);
  });
}

/** Checks one raw HTTP response text: a status below 500, and the one error body when it is an error. */
function rawProblem(label: string, text: string): string | undefined {
  if (text === "") return undefined; // closed without an answer: allowed for bytes that are not HTTP
  const responses = text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((r) => r.startsWith("HTTP/1.1"));
  if (responses.length === 0) return `${label}: not an HTTP answer: ${JSON.stringify(text.slice(0, 100))}`;
  for (const response of responses) {
    const status = Number(response.slice(9, 12));
    if (status >= 500) return `${label}: ${status}`;
    const [head = "", body = ""] = response.split("\r\n\r\n");
    if (leaksInternals(body)) return `${label}: internals leaked`;
    if (!/^x-request-id: \S+/im.test(head)) return `${label}: ${status} without X-Request-Id`;
    if (status >= 400) {
      const type = /content-type: ([^\r\n]+)/i.exec(head)?.[1];
      const shape = errorBodyProblem(status, type, body);
      if (shape) return `${label}: ${status}: ${shape}: ${body.slice(0, 200)}`;
    }
  }
  return undefined;
}

forEachBackend("hostile input", (ctx) => {
  let app: App;

  test(`${REQUESTS} generated requests to every catalogued route: no 5xx, every error in the one body (seed ${SEED})`, async () => {
    ({ app } = await appWith(ctx.store, { RATE_LIMIT_RPS: "0" }));
    try {
      // Every route in turn, in an order the seed shuffles each round: each is fuzzed at least
      // REQUESTS / ROUTES.length times (drawn at random, a few were missed at 1,000 requests).
      assert.ok(REQUESTS >= ROUTES.length, `FUZZ_REQUESTS must be ${ROUTES.length} or more`);
      const orders = fc.sample(fc.shuffledSubarray(ROUTES, { minLength: ROUTES.length }), {
        numRuns: Math.ceil(REQUESTS / ROUTES.length),
        seed: SEED,
      });
      const samples: Generated[] = fc.sample(generated, { numRuns: REQUESTS, seed: SEED }).map((g, i) => ({
        ...g,
        route: orders[Math.floor(i / ROUTES.length)]?.[i % ROUTES.length] as CatalogRoute,
      }));
      let fixtures = await makeFixtures(ctx);
      let other = await ctx.tenant();
      const problems: string[] = [];
      const statuses = new Map<number, number>();
      const routesHit = new Set<string>();
      for (const [i, g] of samples.entries()) {
        // Fresh fixtures now and then: the fuzzer deletes and renames what it finds.
        if (i > 0 && i % 1000 === 0) fixtures = await makeFixtures(ctx);
        const request = toRequest(g, fixtures, other.dev.apiKey);
        const res = await app.inject(request);
        // A key regeneration revoked the key it was made with: carry on with live keys.
        if (g.route.revokesKey && res.statusCode === 201) {
          if (g.auth === "other") other = await ctx.tenant();
          else fixtures = await makeFixtures(ctx);
        }
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        routesHit.add(`${g.route.method} ${g.route.path}`);
        const problem = problemWith(String(request.method), res);
        if (problem)
          problems.push(`#${i} ${request.method} ${String(request.url).slice(0, 600)}: ${problem}`);
      }
      const health = await app.inject({ url: "/health" });
      const summary = [...statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ");
      console.log(
        `[${ctx.backend}] fuzz: ${samples.length} requests over ${routesHit.size}/${ROUTES.length} routes ` +
          `(seed ${SEED}): ${summary}; ${problems.length} problems; /health afterwards ${health.statusCode}`,
      );
      if (process.env.FUZZ_PROBLEMS)
        (await import("node:fs")).writeFileSync(process.env.FUZZ_PROBLEMS, problems.join("\n"));
      assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
      assert.equal(health.statusCode, 200);
      const after = await ctx.client(fixtures.tenant.dev.apiKey).get("/v1/notification-groups");
      assert.equal(after.statusCode, 200, "a valid request still works");
    } finally {
      await app.close();
    }
  });

  test("raw bytes over a socket: invalid UTF-8, broken request lines and headers, smuggling, stalls", async () => {
    const { app: served } = await appWith(ctx.store, { RATE_LIMIT_RPS: "0", REQUEST_TIMEOUT_MS: "1500" });
    try {
      await served.listen({ port: 0, host: "127.0.0.1" });
      const { port } = served.server.address() as net.AddressInfo;
      const f = await makeFixtures(ctx);
      const auth = `Authorization: ApiKey ${f.tenant.dev.apiKey}\r\n`;
      const req = (head: string, body: Buffer | string = "") =>
        Buffer.concat([
          Buffer.from(head, "latin1"),
          Buffer.isBuffer(body) ? body : Buffer.from(body, "latin1"),
        ]);
      const invalidUtf8 = Buffer.from([
        0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x22,
        0x7d,
      ]);
      const cases: [string, Buffer | string][] = [
        [
          "invalid UTF-8 in a JSON body",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${invalidUtf8.length}\r\n\r\n`,
            invalidUtf8,
          ),
        ],
        [
          "invalid UTF-8 in a status body",
          req(
            `PUT /v1/workflows/${f.workflowId}/status HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 14\r\n\r\n`,
            Buffer.from([0x7b, 0x22, 0x61, 0x63, 0x74, 0x69, 0x76, 0x65, 0x22, 0x3a, 0xff, 0xfe, 0x7d, 0x20]),
          ),
        ],
        [
          "invalid UTF-8 in the path",
          req(`GET /v1/workflows/\xff\xfe\xc0\xaf HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
        ],
        [
          "invalid UTF-8 percent-encoded in the path",
          req(`GET /v1/workflows/%ff%fe%c0%af HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
        ],
        [
          "invalid UTF-8 in a header value",
          req(`GET /v1/notification-groups HTTP/1.1\r\nHost: x\r\nAuthorization: ApiKey \xff\xfe\r\n\r\n`),
        ],
        [
          "control character in a header value",
          req(`GET /v1/notification-groups HTTP/1.1\r\nHost: x\r\nAuthorization: ApiKey a\x01b\r\n\r\n`),
        ],
        ["space in a header name", req(`GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n`)],
        ["header without a colon", req(`GET /health HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n`)],
        ["obsolete line folding", req(`GET /health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n`)],
        ["bare LF line endings", req(`GET /health HTTP/1.1\nHost: x\n\n`)],
        ["garbage method", req(`G@T /health HTTP/1.1\r\nHost: x\r\n\r\n`)],
        ["unknown method", req(`BREW /health HTTP/1.1\r\nHost: x\r\n\r\n`)],
        ["HTTP/0.9 style", req(`GET /health\r\n\r\n`)],
        ["HTTP/3.0 version", req(`GET /health HTTP/3.0\r\nHost: x\r\n\r\n`)],
        ["no Host header", req(`GET /health HTTP/1.1\r\n\r\n`)],
        [
          "two Content-Lengths",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 12\r\n\r\n{}`,
          ),
        ],
        [
          "Content-Length and chunked (smuggling)",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n`,
          ),
        ],
        [
          "bad chunk size",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`,
          ),
        ],
        [
          "absurd Content-Length",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 99999999999999999999\r\n\r\n{}`,
          ),
        ],
        [
          "negative Content-Length",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`,
          ),
        ],
        [
          "headers over 16 KiB",
          req(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`),
        ],
        ["10,000 headers", req(`GET /health HTTP/1.1\r\nHost: x\r\n${"X-A: 1\r\n".repeat(10_000)}\r\n`)],
        ["NUL in the request line", req(`GET /hea\x00lth HTTP/1.1\r\nHost: x\r\n\r\n`)],
        [
          "absolute-form URL",
          req(`GET http://evil.example/v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
        ],
        ["asterisk-form URL", req(`OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n`)],
        ["path traversal, raw", req(`GET /v1/../../etc/passwd HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)],
        [
          "a body that stops halfway (stall)",
          req(
            `POST /v1/notification-groups HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`,
          ),
        ],
        ["headers that never finish (slowloris)", req(`GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n`)],
        ["not HTTP at all", Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03])],
        [
          "pipelined valid and broken",
          req(`GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /he\x7fth HTTP/1.1\r\nHost: x\r\n\r\n`),
        ],
      ];
      const problems: string[] = [];
      const answered: string[] = [];
      for (const [label, bytes] of cases) {
        const text = await rawExchange(port, bytes);
        const problem = rawProblem(label, text);
        if (problem) problems.push(problem);
        answered.push(`${label}: ${text.slice(9, 12) || "closed"}`);
      }
      const health = await served.inject({ url: "/health" });
      console.log(`[${ctx.backend}] raw socket cases: ${answered.join("; ")}`);
      assert.deepEqual(problems, []);
      assert.equal(health.statusCode, 200, "the server still answers");
    } finally {
      await served.close();
    }
  });
});

// The limits, in an app of their own (its worker the only one on its database: another app's, with
// the test sinks' loopback allowed, could deliver what this one must refuse). Its clock is moved a
// minute now and then by the attacks themselves.
const limitLines: string[] = [];

forEachBackend<ManualClock>(
  "hostile input: the limits",
  (ctx) => {
    test(`${ATTACKS} generated attacks on the limits: every answer keeps its invariants, the run keeps the quotas, stores nothing over the cap and reaches no internal listener (seed ${SEED})`, async () => {
      const listener = await startInternalListener();
      try {
        const f = await makeLimitFixtures(ctx, ctx.app);
        const environmentId = f.tenant.dev.environmentId;
        const counts = { minutes: 1, notificationsBefore: await notificationsOf(ctx.store, environmentId) };
        const samples = fc.sample(attack(listener.port), { numRuns: ATTACKS, seed: SEED });
        const problems: string[] = [];
        const transactions: string[] = [];
        const kinds = new Map<string, number>();
        const statuses = new Map<number, number>();
        for (const [i, a] of samples.entries()) {
          kinds.set(a.kind, (kinds.get(a.kind) ?? 0) + 1);
          const run = await runAttack(ctx.app, ctx.store, f, a, listener, () => {
            ctx.clock.advance(60_000);
            counts.minutes++;
          });
          transactions.push(...run.transactions);
          for (const e of run.exchanges) {
            statuses.set(e.res.statusCode, (statuses.get(e.res.statusCode) ?? 0) + 1);
            const problem = exchangeProblem(e, listener);
            if (problem) problems.push(`#${i} ${a.kind} ${e.request.method} ${e.request.url}: ${problem}`);
          }
          for (const note of run.notes) problems.push(`#${i} ${a.kind}: ${note}`);
          const minute = await minuteCount(ctx.store, environmentId);
          if (minute > LIMITS.perMinute)
            problems.push(`#${i} ${a.kind}: ${minute} recipients counted this minute`);
        }
        await drain(ctx);
        const run = await runProblems(ctx.app, ctx.store, f, listener, counts, transactions, limitLines);
        problems.push(...run.problems);
        const health = await ctx.app.inject({ url: "/health" });
        const summary = (map: Map<string | number, number>) =>
          [...map.entries()].map(([k, n]) => `${k}×${n}`).join(" ");
        console.log(
          `[${ctx.backend}] limits fuzz: ${samples.length} attacks (seed ${SEED}; ${summary(kinds)}): ` +
            `${summary(new Map([...statuses.entries()].sort(([a], [b]) => a - b)))}; ${counts.minutes} minutes; ` +
            `${run.seen.renderLimits} steps stopped by a render limit, ${run.seen.refusedAtSend} sends refused, ` +
            `${run.seen.notifications} notifications; ` +
            `${problems.length} problems; /health afterwards ${health.statusCode}`,
        );
        assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
        assert.equal(health.statusCode, 200);
      } finally {
        await listener.close();
      }
    });
  },
  {
    clock: () => new ManualClock(),
    app: () => ({
      config: loadConfig(LIMITS_ENV),
      logger: createLogger("info", { write: (line: string) => limitLines.push(line) }),
    }),
  },
);
