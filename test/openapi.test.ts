import assert from "node:assert/strict";
import { test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { compileAllSchemas, pendingCompiles } from "../src/http/validation.ts";
import { openapiPath } from "./documented-answers.ts";
import { anonymous, forEachBackend } from "./harness.ts";
import { ROUTES } from "./route-catalog.ts";

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

/**
 * Novu's v1 API at v0.24.3 (apps/api controllers, without the dashboard-only auth, invites,
 * partner-integrations, blueprint, content-templates and health controllers, the widget's (served
 * under /v1/widgets, see test/widgets.test.ts), the testing ones, and the subscribers controller's
 * two chat OAuth redirects): 112 routes, each Tidings serves, and each it does not with why. Paths
 * as Novu declares them.
 */
const NOVU_V1_SERVED = [
  "DELETE /v1/events/trigger/:transactionId",
  "POST /v1/events/test/email",
  "DELETE /v1/feeds/:feedId",
  "DELETE /v1/integrations/:integrationId",
  "DELETE /v1/layouts/:layoutId",
  "DELETE /v1/messages/:messageId",
  "DELETE /v1/messages/transaction/:transactionId",
  "DELETE /v1/notification-groups/:id",
  "DELETE /v1/notification-templates/:templateId",
  "DELETE /v1/organizations/members/:memberId",
  "DELETE /v1/subscribers/:subscriberId",
  "DELETE /v1/subscribers/:subscriberId/credentials/:providerId",
  "DELETE /v1/tenants/:identifier",
  "DELETE /v1/topics/:topicKey",
  "DELETE /v1/workflow-overrides/:overrideId",
  "DELETE /v1/workflows/:workflowId",
  "GET /v1/changes",
  "GET /v1/changes/count",
  "GET /v1/environments",
  "GET /v1/environments/api-keys",
  "GET /v1/environments/me",
  "GET /v1/execution-details",
  "GET /v1/feeds",
  "GET /v1/inbound-parse/mx/status",
  "GET /v1/integrations",
  "GET /v1/integrations/:channelType/limit",
  "GET /v1/integrations/active",
  "GET /v1/integrations/in-app/status",
  "GET /v1/integrations/webhook/provider/:providerOrIntegrationId/status",
  "GET /v1/layouts",
  "GET /v1/layouts/:layoutId",
  "GET /v1/messages",
  "GET /v1/notification-groups",
  "GET /v1/notification-groups/:id",
  "GET /v1/notification-templates",
  "GET /v1/notification-templates/:workflowIdOrIdentifier",
  "GET /v1/notifications",
  "GET /v1/notifications/:notificationId",
  "GET /v1/notifications/graph/stats",
  "GET /v1/notifications/stats",
  "GET /v1/organizations",
  "GET /v1/organizations/me",
  "GET /v1/organizations/members",
  "GET /v1/subscribers",
  "GET /v1/subscribers/:subscriberId",
  "GET /v1/subscribers/:subscriberId/notifications/feed",
  "GET /v1/subscribers/:subscriberId/notifications/unseen",
  "GET /v1/subscribers/:subscriberId/preferences",
  "GET /v1/subscribers/:subscriberId/preferences/:level",
  "GET /v1/tenants",
  "GET /v1/tenants/:identifier",
  "GET /v1/topics",
  "GET /v1/topics/:topicKey",
  "GET /v1/topics/:topicKey/subscribers/:externalSubscriberId",
  "GET /v1/users/me",
  "GET /v1/workflow-overrides",
  "GET /v1/workflow-overrides/:overrideId",
  "GET /v1/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
  "GET /v1/workflows",
  "GET /v1/workflows/:workflowIdOrIdentifier",
  "GET /v1/workflows/variables",
  "PATCH /v1/layouts/:layoutId",
  "PATCH /v1/notification-groups/:id",
  "PATCH /v1/organizations",
  "PATCH /v1/subscribers/:subscriberId/credentials",
  "PATCH /v1/subscribers/:subscriberId/online-status",
  "PATCH /v1/subscribers/:subscriberId/preferences",
  "PATCH /v1/subscribers/:subscriberId/preferences/:templateId",
  "PATCH /v1/tenants/:identifier",
  "PATCH /v1/topics/:topicKey",
  "POST /v1/changes/:changeId/apply",
  "POST /v1/changes/bulk/apply",
  "POST /v1/environments",
  "POST /v1/environments/api-keys/regenerate",
  "POST /v1/events/trigger",
  "POST /v1/events/trigger/broadcast",
  "POST /v1/events/trigger/bulk",
  "POST /v1/feeds",
  "POST /v1/integrations",
  "POST /v1/integrations/:integrationId/set-primary",
  "POST /v1/layouts",
  "POST /v1/layouts/:layoutId/default",
  "POST /v1/notification-groups",
  "POST /v1/notification-templates",
  "POST /v1/organizations",
  "POST /v1/subscribers",
  "POST /v1/subscribers/:subscriberId/messages/:messageId/actions/:type",
  "POST /v1/subscribers/:subscriberId/messages/mark-all",
  "POST /v1/subscribers/:subscriberId/messages/markAs",
  "POST /v1/subscribers/bulk",
  "POST /v1/tenants",
  "POST /v1/topics",
  "POST /v1/topics/:topicKey/subscribers",
  "POST /v1/topics/:topicKey/subscribers/removal",
  "POST /v1/workflow-overrides",
  "POST /v1/workflows",
  "PUT /v1/environments/:environmentId",
  "PUT /v1/integrations/:integrationId",
  "PUT /v1/notification-templates/:templateId",
  "PUT /v1/notification-templates/:templateId/status",
  "PUT /v1/organizations/branding",
  "PUT /v1/organizations/members/:memberId/roles",
  "PUT /v1/subscribers/:subscriberId",
  "PUT /v1/subscribers/:subscriberId/credentials",
  "PUT /v1/workflow-overrides/:overrideId",
  "PUT /v1/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
  "PUT /v1/workflows/:workflowId",
  "PUT /v1/workflows/:workflowId/status",
];
const NOVU_V1_LEFT: Record<string, string> = {
  "GET /v1/storage/upload-url":
    "Tidings stores no uploaded files: Novu answers a signed URL of its cloud storage to upload to",
  "PUT /v1/users/onboarding": "Tidings has no users: the flag of Novu's dashboard has no one to be kept for",
  "PUT /v1/users/onboarding-tour": "Tidings has no users (the same, for the tour)",
  "PUT /v1/users/profile/email": "Tidings has no users, and keeps no one's address to change",
};

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

  test("covers Novu's v1 routes (v0.24.3) but the few it leaves, each with why", async () => {
    const doc = await document();
    // Parameters by place, not name: Novu's `:templateId` is our `{workflowId}`.
    const shape = (path: string) => path.replace(/:\w+|\{\w+\}/g, "{}");
    const served = new Set(
      Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${shape(path)}`),
      ),
    );
    const documented = (route: string) => {
      const [method = "", path = ""] = route.split(" ");
      return served.has(`${method} ${shape(path)}`);
    };
    assert.deepEqual(
      NOVU_V1_SERVED.filter((route) => !documented(route)),
      [],
      "every served route is documented",
    );
    assert.deepEqual(Object.keys(NOVU_V1_LEFT).filter(documented), [], "a route left is not served");
    assert.deepEqual([NOVU_V1_SERVED.length, Object.keys(NOVU_V1_LEFT).length], [108, 4]);
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

  // That every route really answers what its documented responses say (the valid call and a 404)
  // is checked by the catalog's walk in test/auth-and-tenancy.test.ts, which makes those calls anyway.
});
