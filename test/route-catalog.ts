import assert from "node:assert/strict";
import type { TestContext, TestTenant } from "./harness.ts";

/** What a route needs to exist before it can be called: made fresh in the tenant's Development environment. */
export interface Fixtures {
  tenant: TestTenant;
  workflowId: string;
  workflowIdentifier: string;
  /** A group no workflow uses (so it can be renamed or deleted). */
  groupId: string;
}

export interface CatalogRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path as Fastify declares it (`/v1/workflows/:workflowId/status`). */
  path: string;
  /** The concrete URL for a call within the fixtures' environment. */
  url(f: Fixtures): string;
  /** A valid body, when the route takes one. */
  body?(f: Fixtures): Record<string, unknown>;
  /** The success status of a valid call. */
  ok: number;
  /** True when the URL names a resource, so another environment's key must get 404. */
  scoped: boolean;
}

const both = (path: string) => [path, path.replace("/v1/workflows", "/v1/notification-templates")];

let counter = 0;
const unique = (prefix: string) => `${prefix} ${process.pid}-${Date.now()}-${counter++}`;

/**
 * Every /v1 route, with a valid call. The shared auth and tenancy cases run for each of these, and a
 * test fails when the OpenAPI document lists a /v1 route that is missing here: a new route cannot
 * forget them.
 */
export const ROUTES: CatalogRoute[] = [
  ...both("/v1/workflows").map(
    (path): CatalogRoute => ({
      method: "POST",
      path,
      url: () => path,
      body: (f) => ({
        name: unique("Catalog workflow"),
        notificationGroupId: f.tenant.dev.generalGroupId,
        steps: [{ template: { type: "in_app", content: "Hello {{name}}" } }],
      }),
      ok: 201,
      scoped: false,
    }),
  ),
  ...both("/v1/workflows/:workflowId").map(
    (path): CatalogRoute => ({
      method: "GET",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      ok: 200,
      scoped: true,
    }),
  ),
  ...both("/v1/workflows/:workflowId/status").map(
    (path): CatalogRoute => ({
      method: "PUT",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      body: () => ({ active: true }),
      ok: 200,
      scoped: true,
    }),
  ),
  ...both("/v1/workflows").map(
    (path): CatalogRoute => ({
      method: "GET",
      path,
      url: () => `${path}?page=0&limit=10`,
      ok: 200,
      scoped: false,
    }),
  ),
  ...both("/v1/workflows/:workflowId").map(
    (path): CatalogRoute => ({
      method: "PUT",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      body: () => ({ description: unique("Catalog update") }),
      ok: 200,
      scoped: true,
    }),
  ),
  ...both("/v1/workflows/:workflowId").map(
    (path): CatalogRoute => ({
      method: "DELETE",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      ok: 200,
      scoped: true,
    }),
  ),
  {
    method: "GET",
    path: "/v1/notification-groups/:id",
    url: (f) => `/v1/notification-groups/${f.groupId}`,
    ok: 200,
    scoped: true,
  },
  {
    method: "PATCH",
    path: "/v1/notification-groups/:id",
    url: (f) => `/v1/notification-groups/${f.groupId}`,
    body: () => ({ name: unique("Catalog rename") }),
    ok: 200,
    scoped: true,
  },
  {
    method: "DELETE",
    path: "/v1/notification-groups/:id",
    url: (f) => `/v1/notification-groups/${f.groupId}`,
    ok: 200,
    scoped: true,
  },
  {
    method: "POST",
    path: "/v1/notification-groups",
    url: () => "/v1/notification-groups",
    body: () => ({ name: unique("Catalog group") }),
    ok: 201,
    scoped: false,
  },
  {
    method: "GET",
    path: "/v1/notification-groups",
    url: () => "/v1/notification-groups",
    ok: 200,
    scoped: false,
  },
];

/** A fresh tenant with one workflow and one unused group in its Development environment. */
export async function makeFixtures(ctx: TestContext): Promise<Fixtures> {
  const tenant = await ctx.tenant();
  const api = ctx.client(tenant.dev.apiKey);
  const workflow = await api.post("/v1/workflows", {
    name: unique("Fixture workflow"),
    notificationGroupId: tenant.dev.generalGroupId,
    steps: [{ template: { type: "email", subject: "Hi", content: "Hello {{firstName}}" } }],
  });
  assert.equal(workflow.statusCode, 201, workflow.body);
  const group = await api.post("/v1/notification-groups", { name: unique("Fixture group") });
  assert.equal(group.statusCode, 201, group.body);
  return {
    tenant,
    workflowId: workflow.json().data._id,
    workflowIdentifier: workflow.json().data.triggers[0].identifier,
    groupId: group.json().data._id,
  };
}
