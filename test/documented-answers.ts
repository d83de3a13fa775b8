import assert from "node:assert/strict";
import { Ajv, type ValidateFunction } from "ajv";
import * as ajvFormats from "ajv-formats";
import type { LightMyRequestResponse } from "fastify";

// ajv-formats is CommonJS; under ESM its function arrives as the default export's default.
const addFormats = (ajvFormats.default as unknown as { default: (ajv: Ajv) => Ajv }).default;

/** A Fastify path (`/v1/workflows/:workflowId`) as the OpenAPI document writes it. */
export const openapiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");
/** A JSON pointer segment. */
const pointerSegment = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Checks answers against the OpenAPI document's responses: what a route really answers must match
 * what the document says it answers, for the status it answered with. Each schema is compiled once.
 */
export function documentedAnswers(doc: unknown) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc as object, "openapi");
  const compiled = new Map<string, ValidateFunction | undefined>();
  return (route: { method: string; path: string }, res: LightMyRequestResponse) => {
    const where = `${route.method} ${route.path} (${res.statusCode})`;
    if (res.statusCode === 204) {
      assert.equal(res.body, "", `${where}: a 204 has no body`);
      return;
    }
    const pointer = `openapi#/paths/${pointerSegment(openapiPath(route.path))}/${route.method.toLowerCase()}/responses/${res.statusCode}/content/application~1json/schema`;
    if (!compiled.has(pointer)) compiled.set(pointer, ajv.getSchema(pointer));
    const validate = compiled.get(pointer);
    assert.ok(validate, `${where}: the document describes this answer (${pointer})`);
    assert.ok(validate(res.json()), `${where}: ${JSON.stringify(validate.errors)}`);
  };
}
