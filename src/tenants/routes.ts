import { described, errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentTenant } from "./presenter.ts";
import {
  CreateTenantBody,
  ListTenantsQuery,
  TenantEnvelope,
  TenantPage,
  TenantParams,
  UpdateTenantBody,
} from "./schemas.ts";
import { createTenant, deleteTenant, getTenant, listTenants, updateTenant } from "./service.ts";

const TAGS = ["Tenants"];

/** Novu's `/v1/tenants`: an environment's tenants, each named by its identifier. */
export const tenantRoutes: RoutePlugin = async (app) => {
  app.get(
    "/tenants",
    {
      schema: {
        operationId: "listTenants",
        tags: TAGS,
        summary: "List the environment's tenants, newest first",
        querystring: ListTenantsQuery,
        response: {
          200: described(TenantPage, "One page of tenants"),
          ...errorResponsesOf({ 400: "page or limit out of range (limit 1–100)" }),
        },
      },
    },
    async (request) => {
      const page = await listTenants(depsOf(app), request.tenant, request.query);
      return { ...page, data: page.data.map(presentTenant) };
    },
  );

  app.get(
    "/tenants/:identifier",
    {
      schema: {
        operationId: "getTenant",
        tags: TAGS,
        summary: "Get a tenant by identifier",
        params: TenantParams,
        response: {
          200: described(TenantEnvelope, "The tenant"),
          ...errorResponsesOf({
            400: "Not an identifier",
            404: "No tenant of this identifier in the environment",
          }),
        },
      },
    },
    async (request) => ({
      data: presentTenant(await getTenant(depsOf(app), request.tenant, request.params.identifier)),
    }),
  );

  app.post(
    "/tenants",
    {
      schema: {
        operationId: "createTenant",
        tags: TAGS,
        summary: "Create a tenant",
        description: "The identifier is unique in the environment (409 for one that is taken).",
        headers: IdempotencyKeyHeaders,
        body: CreateTenantBody,
        response: {
          201: replayable(described(TenantEnvelope, "The new tenant")),
          ...errorResponsesOf({
            400: "A missing or invalid identifier, name or data",
            409: "The environment has a tenant of this identifier, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentTenant(await createTenant(depsOf(app, db), request.tenant, request.body)),
      })),
  );

  app.patch(
    "/tenants/:identifier",
    {
      schema: {
        operationId: "updateTenant",
        tags: TAGS,
        summary: "Change a tenant's identifier, name or data",
        headers: IdempotencyKeyHeaders,
        params: TenantParams,
        body: UpdateTenantBody,
        response: {
          200: replayable(described(TenantEnvelope, "The tenant after the change")),
          ...errorResponsesOf({
            400: "An invalid identifier, name or data",
            404: "No tenant of this identifier in the environment",
            409: "Another tenant has the new identifier, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: presentTenant(
          await updateTenant(depsOf(app, db), request.tenant, request.params.identifier, request.body),
        ),
      })),
  );

  app.delete(
    "/tenants/:identifier",
    {
      schema: {
        operationId: "deleteTenant",
        tags: TAGS,
        summary: "Delete a tenant",
        params: TenantParams,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({
            400: "Not an identifier",
            404: "No tenant of this identifier in the environment",
          }),
        },
      },
    },
    async (request, reply) => {
      await deleteTenant(depsOf(app), request.tenant, request.params.identifier);
      return reply.code(204).send(null);
    },
  );
};
