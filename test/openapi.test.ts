import assert from "node:assert/strict";
import { test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv } from "ajv";
import * as ajvFormats from "ajv-formats";
import { compileAllSchemas, pendingCompiles } from "../src/http/validation.ts";
import { anonymous, forEachBackend } from "./harness.ts";
import { OBJECT_ID_ANYWHERE } from "./patterns.ts";
import { makeFixtures, ROUTES } from "./route-catalog.ts";

type Operation = {
  operationId?: string;
  summary?: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
  >;
  security?: unknown[];
};
type Document = { paths: Record<string, Record<string, Operation>> };

// ajv-formats is CommonJS; under ESM its function arrives as the default export's default.
const addFormats = (ajvFormats.default as unknown as { default: (ajv: Ajv) => Ajv }).default;

const openapiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");
/** A JSON pointer segment. */
const pointerSegment = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

forEachBackend("GET /openapi.json", (ctx) => {
  async function document(): Promise<Document> {
    const res = await anonymous(ctx).get("/openapi.json");
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  test("every route's request and response schemas compile (a process compiles each on its first use)", () => {
    // What the app's routes registered and no request has used yet: a schema the validator or the
    // serializer cannot compile would otherwise be found by the first request to use it.
    compileAllSchemas();
    assert.equal(pendingCompiles.size, 0);
  });

  test("is a valid OpenAPI 3.1 document (checked by an OpenAPI validator)", async () => {
    const doc = await document();
    assert.equal((doc as unknown as { openapi: string }).openapi, "3.1.0");
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });

  test("describes every /v1 and /v2 operation: id, summary, security, body, parameters and responses", async () => {
    const doc = await document();
    const ids = new Set<string>();
    for (const route of ROUTES) {
      const name = `${route.method} ${route.path}`;
      const operation = doc.paths[openapiPath(route.path)]?.[route.method.toLowerCase()];
      assert.ok(operation, `${name} is documented`);
      assert.ok(operation.operationId && !ids.has(operation.operationId), `${name} has its own operationId`);
      ids.add(operation.operationId);
      assert.ok(operation.summary, `${name} has a summary`);
      assert.deepEqual(operation.security, [{ ApiKey: [] }], `${name} needs the API key`);
      const success = operation.responses[String(route.ok)];
      if (route.ok === 204) {
        assert.ok(success && !success.content, `${name} documents its 204 without a body`);
      } else {
        assert.ok(success?.content?.["application/json"]?.schema, `${name} documents its ${route.ok} body`);
      }
      assert.notEqual(success?.description, "Default Response", `${name} says what its ${route.ok} is`);
      if (!success) continue;
      for (const code of ["401", "4XX", "5XX"]) {
        assert.ok(operation.responses[code]?.content, `${name} documents ${code}`);
      }
      for (const param of route.path.match(/:(\w+)/g) ?? []) {
        assert.ok(
          operation.parameters?.some((p) => p.in === "path" && p.name === param.slice(1)),
          `${name} documents its path parameter ${param}`,
        );
      }
      if (route.body) {
        assert.ok(operation.requestBody?.content["application/json"]?.schema, `${name} documents its body`);
      }
      if (route.noIdempotencyKey) {
        assert.ok(
          !operation.parameters?.some((p) => p.in === "header" && p.name === "idempotency-key"),
          `${name} takes no Idempotency-Key (${route.noIdempotencyKey}), so it must not document one`,
        );
      } else if (route.method === "POST" || route.method === "PATCH") {
        assert.ok(
          operation.parameters?.some((p) => p.in === "header" && p.name === "idempotency-key"),
          `${name} documents Idempotency-Key`,
        );
        assert.ok(success.headers?.["idempotency-replay"], `${name} documents Idempotency-Replay`);
      }
    }
    const list = doc.paths["/v1/workflows"]?.get;
    assert.deepEqual(
      list?.parameters
        ?.filter((p) => p.in === "query")
        .map((p) => p.name)
        .sort(),
      ["limit", "page", "query"],
    );
  });

  test("every documented response schema matches what the route really answers", async () => {
    const doc = await document();
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, "openapi");
    // Four routes at a time, each on fixtures of its own: their waits on the database overlap.
    const queue = [...ROUTES];
    const check = async (route: (typeof ROUTES)[number]) => {
      const f = await makeFixtures(ctx);
      const body = route.body?.(f);
      const res = await ctx.client(f.tenant.dev.apiKey).request({
        method: route.method,
        url: route.url(f),
        headers: body ? { "content-type": "application/json" } : {},
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
      assert.equal(res.statusCode, route.ok, res.body);
      const responses = `openapi#/paths/${pointerSegment(openapiPath(route.path))}/${route.method.toLowerCase()}/responses`;
      if (route.ok === 204) {
        assert.equal(res.body, "", `${route.method} ${route.path}: a 204 has no body`);
      } else {
        const pointer = `${responses}/${route.ok}/content/application~1json/schema`;
        const validate = ajv.getSchema(pointer);
        assert.ok(validate, pointer);
        assert.ok(validate(res.json()), `${route.method} ${route.path}: ${JSON.stringify(validate.errors)}`);
      }
      // An error answer matches the documented error body too.
      const missing = await ctx.client(f.tenant.dev.apiKey).request({
        method: route.method,
        url: route.url(f).replace(OBJECT_ID_ANYWHERE, "0123456789abcdef01234567"),
        headers: body ? { "content-type": "application/json" } : {},
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
      if (missing.statusCode === 404) {
        const error = ajv.getSchema(`${responses}/404/content/application~1json/schema`);
        assert.ok(error, `${route.method} ${route.path} documents its 404`);
        assert.ok(error(missing.json()), JSON.stringify(error.errors));
      }
    };
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let route = queue.shift(); route !== undefined; route = queue.shift()) await check(route);
      }),
    );
  });
});
