import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentOverride } from "./presenter.ts";
import {
  CreateOverrideBody,
  ListOverridesQuery,
  OverrideEnvelope,
  OverridePage,
  OverridePairParams,
  OverrideParams,
  UpdateOverrideBody,
} from "./schemas.ts";
import {
  createOverride,
  deleteOverride,
  getOverride,
  getOverrideOf,
  listOverrides,
  updateOverride,
  updateOverrideOf,
} from "./service.ts";

const TAGS = ["Workflow overrides"];
const NOT_FOUND = "No override of this id in the environment";
const PAIR_NOT_FOUND = "No such workflow, tenant, or override of the workflow for the tenant";

/** Novu's `/v1/workflow-overrides`: a workflow's settings for one tenant's triggers. */
export const workflowOverrideRoutes: RoutePlugin = async (app) => {
  app.post(
    "/workflow-overrides",
    {
      schema: {
        operationId: "createWorkflowOverride",
        tags: TAGS,
        summary: "Override a workflow for one tenant",
        description:
          "For triggers that name the tenant: `active: false` runs nothing, and `preferenceSettings` replace the workflow's channel defaults.",
        headers: IdempotencyKeyHeaders,
        body: CreateOverrideBody,
        response: {
          201: replayable(described(OverrideEnvelope, "The new override")),
          ...errorResponsesOf({
            400: "A missing or invalid workflowId, tenantId (a tenant's _id) or setting",
            404: "No such workflow or tenant in the environment",
            409: "The workflow has an override for the tenant already, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentOverride(await createOverride(depsOf(app, db), request.tenant, request.body)),
      })),
  );

  app.get(
    "/workflow-overrides",
    {
      schema: {
        operationId: "listWorkflowOverrides",
        tags: TAGS,
        summary: "List the environment's workflow overrides, newest first",
        querystring: ListOverridesQuery,
        response: {
          200: described(OverridePage, "One page of overrides"),
          ...errorResponsesOf({ 400: "page or limit out of range (limit 1–100)" }),
        },
      },
    },
    async (request) => {
      const page = await listOverrides(depsOf(app), request.tenant, request.query);
      return {
        page: page.page,
        pageSize: page.pageSize,
        hasMore: page.hasMore,
        data: page.data.map(presentOverride),
      };
    },
  );

  app.get(
    "/workflow-overrides/:overrideId",
    {
      schema: {
        operationId: "getWorkflowOverrideById",
        tags: TAGS,
        summary: "Get a workflow override",
        params: OverrideParams,
        response: {
          200: described(OverrideEnvelope, "The override"),
          ...errorResponsesOf({ 400: "Not an id", 404: NOT_FOUND }),
        },
      },
    },
    async (request) => ({
      data: presentOverride(await getOverride(depsOf(app), request.tenant, request.params.overrideId)),
    }),
  );

  app.put(
    "/workflow-overrides/:overrideId",
    {
      schema: {
        operationId: "updateWorkflowOverrideById",
        tags: TAGS,
        summary: "Change a workflow override",
        description: "What is sent changes; channels `preferenceSettings` leaves out keep their values.",
        params: OverrideParams,
        body: UpdateOverrideBody,
        response: {
          200: described(OverrideEnvelope, "The override after the change"),
          ...errorResponsesOf({ 400: "Not an id, or an invalid setting", 404: NOT_FOUND }),
        },
      },
    },
    async (request) => ({
      data: presentOverride(
        await updateOverride(depsOf(app), request.tenant, request.params.overrideId, request.body),
      ),
    }),
  );

  app.get(
    "/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
    {
      schema: {
        operationId: "getWorkflowOverride",
        tags: TAGS,
        summary: "Get a workflow's override for a tenant",
        params: OverridePairParams,
        response: {
          200: described(OverrideEnvelope, "The override"),
          ...errorResponsesOf({ 400: "A tenantId that is not a tenant's _id", 404: PAIR_NOT_FOUND }),
        },
      },
    },
    async (request) => ({
      data: presentOverride(
        await getOverrideOf(depsOf(app), request.tenant, request.params.workflowId, request.params.tenantId),
      ),
    }),
  );

  app.put(
    "/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
    {
      schema: {
        operationId: "updateWorkflowOverride",
        tags: TAGS,
        summary: "Change a workflow's override for a tenant",
        params: OverridePairParams,
        body: UpdateOverrideBody,
        response: {
          200: described(OverrideEnvelope, "The override after the change"),
          ...errorResponsesOf({
            400: "A tenantId that is not a tenant's _id, or an invalid setting",
            404: PAIR_NOT_FOUND,
          }),
        },
      },
    },
    async (request) => ({
      data: presentOverride(
        await updateOverrideOf(
          depsOf(app),
          request.tenant,
          request.params.workflowId,
          request.params.tenantId,
          request.body,
        ),
      ),
    }),
  );

  app.delete(
    "/workflow-overrides/:overrideId",
    {
      schema: {
        operationId: "deleteWorkflowOverride",
        tags: TAGS,
        summary: "Delete a workflow override",
        params: OverrideParams,
        response: {
          200: described(Envelope(Type.Literal(true)), "Deleted"),
          ...errorResponsesOf({ 400: "Not an id", 404: NOT_FOUND }),
        },
      },
    },
    async (request) => {
      await deleteOverride(depsOf(app), request.tenant, request.params.overrideId);
      return { data: true as const };
    },
  );
};
