// The dashboard's API types (dashboard/src/api-schema.ts) are generated from the OpenAPI document the
// app serves; the dashboard is type-checked against them (npm run lint). This fails while the
// committed file lags the routes, so a route change reaches the dashboard's type-check.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { generateApiTypes, TYPES_FILE } from "../scripts/dashboard-api-types.ts";

test("dashboard/src/api-schema.ts matches /openapi.json (npm run dashboard:types rewrites it)", async () => {
  const fresh = await generateApiTypes();
  assert.ok(fresh.includes('"/v1/workflows/{workflowId}/status"'));
  assert.ok(
    readFileSync(TYPES_FILE, "utf8") === fresh,
    "dashboard/src/api-schema.ts is out of date: npm run dashboard:types",
  );
});
