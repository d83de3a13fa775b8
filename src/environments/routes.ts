import { Type } from "typebox";
import type { Deps } from "../deps.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { GroupReferences } from "../notification-groups/service.ts";
import type { KeySealer } from "../tenancy/domain.ts";
import { presentEnvironment } from "../tenancy/presenter.ts";
import { EnvironmentResource } from "../tenancy/schemas.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { presentWorkflowV2 } from "../workflows/presenter.ts";
import { V2Workflow, V2WorkflowParams } from "../workflows/schemas.ts";
import { getWorkflow, getWorkflowIn } from "../workflows/service.ts";
import { changeCount, presentChangeV1, presentDiff, presentPublish } from "./presenter.ts";
import {
  BulkApplyBody,
  ChangeIdParams,
  ChangePage,
  ChangeResource,
  CreatedEnvironment,
  CreateEnvironmentBody,
  DiffEnvironmentBody,
  EnvironmentDiff,
  EnvironmentIdParams,
  EnvironmentTags,
  ListChangesQuery,
  PublishEnvironmentBody,
  PublishResultSchema,
  TargetEnvironmentParams,
  UpdateEnvironmentBody,
} from "./schemas.ts";
import {
  applyChanges,
  createEnvironment,
  deleteEnvironment,
  diffEnvironments,
  getEnvironmentTags,
  pendingChanges,
  publishEnvironment,
  updateEnvironment,
} from "./service.ts";

const TAGS = ["Environments"];

/**
 * The organization's environments (create, update, delete: Novu's `/v1/environments`, which
 * @novu/api 3 calls) and Novu's v1 change list. `sealer` keeps the new environments' keys sealed for
 * the inbox widget's HMAC; `references` says which workflows use a group (a publish deleting one).
 */
export const environmentV1Routes: RoutePluginWith<{
  sealer?: KeySealer | undefined;
  references: GroupReferences;
}> = async (app, { sealer, references }) => {
  app.post(
    "/environments",
    {
      schema: {
        operationId: "createEnvironment",
        tags: TAGS,
        summary: "Create an environment (with its General group and an API key)",
        description:
          "Derived from `parentId` (default Development): diff and publish take it from there. Its first API " +
          "key is in `apiKeys`, whole, this once. Takes no Idempotency-Key: a stored response would keep the key.",
        body: CreateEnvironmentBody,
        response: {
          201: described(Envelope(CreatedEnvironment), "The environment and its first key"),
          ...errorResponsesOf({ 400: "Invalid body, a name in use, or a parent of another organization" }),
        },
      },
    },
    async (request, reply) => {
      const { environment, apiKey } = await createEnvironment(
        depsOf(app),
        request.tenant,
        request.body,
        sealer,
      );
      reply.code(201);
      return { data: { ...presentEnvironment(environment), apiKeys: [{ key: apiKey.key, _userId: "" }] } };
    },
  );

  app.put(
    "/environments/:environmentId",
    {
      schema: {
        operationId: "updateEnvironment",
        tags: TAGS,
        summary: "Rename an environment, derive it from another, change its identifier or its HMAC",
        params: EnvironmentIdParams,
        body: UpdateEnvironmentBody,
        response: {
          200: described(Envelope(EnvironmentResource), "The environment after the change"),
          ...errorResponsesOf({
            400: "Invalid body; renaming Development or Production; a name in use; a parent that makes a loop",
            403: "hmac: false in Production, whose inbox sessions always need the HMAC",
            404: "No such environment in the organization",
            409: "Another environment has this identifier",
          }),
        },
      },
    },
    async (request) => ({
      data: presentEnvironment(
        await updateEnvironment(depsOf(app), request.tenant, request.params.environmentId, request.body),
      ),
    }),
  );

  app.delete(
    "/environments/:environmentId",
    {
      schema: {
        operationId: "deleteEnvironment",
        tags: TAGS,
        summary: "Delete an environment the organization made (with its keys, groups and layouts)",
        description:
          "Development and Production stay. Refused while the environment holds workflows, subscribers, topics, " +
          "integrations or notifications, or while another environment derives from it.",
        params: EnvironmentIdParams,
        response: {
          200: described(
            Envelope(
              Type.Object(
                { acknowledged: Type.Boolean(), status: Type.Literal("deleted") },
                { additionalProperties: false },
              ),
            ),
            "Deleted",
          ),
          ...errorResponsesOf({
            400: "Development or Production, or an environment that still holds something",
            404: "No such environment in the organization",
          }),
        },
      },
    },
    async (request) => {
      await deleteEnvironment(depsOf(app), request.tenant, request.params.environmentId);
      return { data: { acknowledged: true, status: "deleted" as const } };
    },
  );

  app.get(
    "/changes",
    {
      schema: {
        operationId: "listChanges",
        tags: ["Changes"],
        summary: "The key's environment's changes not yet in the environment derived from it",
        description:
          "Novu's v1 change list, over the same comparison as `POST /v2/environments/:id/diff`: each workflow, " +
          "group and email layout of this environment (Development) that Production lacks, has otherwise, or " +
          "still has after it was deleted here (`type` NotificationTemplate, NotificationGroup, Layout, or " +
          "DefaultLayout for a layout change that moves the default). A change's `_id` is its record's id. " +
          "Applied changes are not kept: `promoted=true` lists none.",
        querystring: ListChangesQuery,
        response: {
          200: described(ChangePage, "One page of pending changes, newest first"),
          ...errorResponsesOf({ 400: "page or limit out of range" }),
        },
      },
    },
    async (request) => {
      const page = request.query.page ?? 0;
      const limit = request.query.limit ?? 10;
      const promoted = String(request.query.promoted ?? "false") === "true";
      const promotion = promoted ? undefined : await pendingChanges(depsOf(app), request.tenant);
      const all = promotion
        ? [...promotion.workflows, ...promotion.groups, ...promotion.layouts]
            .map((change) => presentChangeV1(promotion, change))
            .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
        : [];
      return {
        page,
        pageSize: limit,
        totalCount: all.length,
        data: all.slice(page * limit, (page + 1) * limit),
      };
    },
  );

  app.get(
    "/changes/count",
    {
      schema: {
        operationId: "countChanges",
        tags: ["Changes"],
        summary: "How many changes are pending",
        response: {
          200: described(Envelope(Type.Integer()), "The number of pending changes"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => {
      const promotion = await pendingChanges(depsOf(app), request.tenant);
      return { data: promotion ? changeCount(promotion) : 0 };
    },
  );

  const applied = async (tenant: Tenant, ids: string[], db: Deps["db"]) => {
    const result = await applyChanges(depsOf(app, db), tenant, ids, references);
    return {
      data: result.published
        .filter((p) => p.outcome !== "skipped")
        .map((p) => presentChangeV1(result.promotion, p.change, true)),
    };
  };

  app.post(
    "/changes/:changeId/apply",
    {
      schema: {
        operationId: "applyChange",
        tags: ["Changes"],
        summary: "Apply one pending change (publish it, with the group and new layouts its workflow needs)",
        headers: IdempotencyKeyHeaders,
        params: ChangeIdParams,
        response: {
          201: replayable(described(Envelope(Type.Array(ChangeResource)), "The changes applied")),
          ...errorResponsesOf({
            404: "No such pending change",
            422: "Production cannot take it (a record there holds its name or identifier): nothing was applied",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, (db) =>
        applied(request.tenant, [request.params.changeId], db),
      ),
  );

  app.post(
    "/changes/bulk/apply",
    {
      schema: {
        operationId: "applyChanges",
        tags: ["Changes"],
        summary: "Apply several pending changes at once",
        description: "All of them, or (a record Production cannot take) none.",
        headers: IdempotencyKeyHeaders,
        body: BulkApplyBody,
        response: {
          201: replayable(described(Envelope(Type.Array(ChangeResource)), "The changes applied")),
          ...errorResponsesOf({
            404: "A change that is not pending",
            422: "Production cannot take one of them: nothing was applied",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, (db) =>
        applied(request.tenant, request.body.changeIds, db),
      ),
  );
};

/** Novu's v2 environment routes (@novu/api 3's `environments`): tags, diff, publish, and a workflow's sync. */
export const environmentV2Routes: RoutePluginWith<{ references: GroupReferences }> = async (
  app,
  { references },
) => {
  app.get(
    "/environments/:environmentId/tags",
    {
      schema: {
        operationId: "getEnvironmentTags",
        tags: TAGS,
        summary: "The tags of an environment's workflows",
        params: EnvironmentIdParams,
        response: {
          200: described(Envelope(EnvironmentTags), "Each tag once, sorted"),
          ...errorResponsesOf({ 404: "No such environment in the organization" }),
        },
      },
    },
    async (request) => ({
      data: (await getEnvironmentTags(depsOf(app), request.tenant, request.params.environmentId)).map(
        (name) => ({
          name,
        }),
      ),
    }),
  );

  app.post(
    "/environments/:targetEnvironmentId/diff",
    {
      schema: {
        operationId: "diffEnvironment",
        tags: TAGS,
        summary: "What publishing into this environment would change",
        description:
          "Compares the source (default: the target's parent, Development for Production) with the target: each " +
          "workflow (`resources`), group (`notificationGroups`) and email layout (`layouts`) the target lacks " +
          "(added), has otherwise (modified, with the fields that differ) or still has after it was deleted in " +
          "the source (deleted). A record of the target is the source's copy when its `_parentId` names it; " +
          "records the target made itself are never compared. `resourceType` is REGULAR for a workflow, the " +
          "value @novu/api 3.19 accepts, and `layout` for a layout (Novu's value, which that SDK's enum refuses: " +
          "hence the list of their own, beside `resources`).",
        body: DiffEnvironmentBody,
        params: TargetEnvironmentParams,
        response: {
          200: described(Envelope(EnvironmentDiff), "The changes a publish would make"),
          ...errorResponsesOf({
            400: "The target derives from nothing and no sourceEnvironmentId was given, or they are the same",
            404: "No such environment in the organization",
          }),
        },
      },
    },
    async (request) => ({
      data: presentDiff(
        await diffEnvironments(
          depsOf(app),
          request.tenant,
          request.params.targetEnvironmentId,
          request.body?.sourceEnvironmentId,
        ),
      ),
    }),
  );

  app.post(
    "/environments/:targetEnvironmentId/publish",
    {
      schema: {
        operationId: "publishEnvironment",
        tags: TAGS,
        summary:
          "Publish the source's workflows, groups and layouts into this environment, in one transaction",
        description:
          "Applies what the diff shows: a copy (its own `_id`, its `_parentId` naming the source) for each added " +
          "record, the copy rewritten for each modified one, the copy deleted when its source was (a group or " +
          "layout copy the target's workflows still use, or a layout copy that would be left the target's " +
          "default, stays: `skipped`, with the reason). All of it lands, or none: a record the target cannot " +
          "take (its trigger identifier, group name or layout identifier held by another record of the target) " +
          "is a 422 and changes nothing. `resources` publishes some changes only (their `resourceId`s, with the " +
          "groups and the new layouts their workflows need; a layout that stops being the default brings the " +
          "one that becomes it); `dryRun` answers and writes nothing.",
        headers: IdempotencyKeyHeaders,
        body: PublishEnvironmentBody,
        params: TargetEnvironmentParams,
        response: {
          200: replayable(described(Envelope(PublishResultSchema), "What was published")),
          ...errorResponsesOf({
            400: "The target derives from nothing and no sourceEnvironmentId was given, or they are the same",
            404: "No such environment in the organization, or a resourceId that is no pending change",
            422: "The target cannot take a record: nothing was published",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => {
        const body = request.body ?? {};
        return {
          data: presentPublish(
            await publishEnvironment(
              depsOf(app, db),
              request.tenant,
              request.params.targetEnvironmentId,
              {
                sourceEnvironmentId: body.sourceEnvironmentId,
                dryRun: body.dryRun,
                resourceIds: body.resources?.map((r) => r.resourceId),
              },
              references,
            ),
          ),
        };
      }),
  );

  app.put(
    "/workflows/:workflowId/sync",
    {
      schema: {
        operationId: "syncWorkflowV2",
        tags: ["Workflows (v2)"],
        summary: "Publish one workflow of the key's environment into another environment",
        description:
          "The publish of this one workflow (with its group, and the layouts its steps name, when the target " +
          "lacks them) into `targetEnvironmentId`; " +
          "answers the copy in the target.",
        params: V2WorkflowParams,
        body: Type.Object(
          {
            targetEnvironmentId: Type.String({
              pattern: "^[0-9a-f]{24}$",
              description: "Where to publish it",
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: described(Envelope(V2Workflow), "The workflow's copy in the target"),
          ...errorResponsesOf({
            400: "The target is the key's own environment",
            404: "No such workflow, or no such environment in the organization",
            422: "The target cannot take it: nothing was published",
          }),
        },
      },
    },
    async (request) => {
      const deps = depsOf(app);
      const { targetEnvironmentId } = request.body;
      const workflow = await getWorkflow(deps, request.tenant, request.params.workflowId);
      const pending = await diffEnvironments(
        deps,
        request.tenant,
        targetEnvironmentId,
        request.tenant.environmentId,
      );
      if (pending.workflows.some((change) => change.sourceId === workflow.id)) {
        await publishEnvironment(
          deps,
          request.tenant,
          targetEnvironmentId,
          { sourceEnvironmentId: request.tenant.environmentId, resourceIds: [workflow.id] },
          references,
        );
      }
      return {
        data: presentWorkflowV2(
          await getWorkflowIn(deps, request.tenant, targetEnvironmentId, workflow.identifier),
        ),
      };
    },
  );
};
