import { unprocessable } from "../errors.ts";
import { described, Envelope, errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { defaultGroup } from "../notification-groups/service.ts";
import { controlValuesOf, v2TypeOf } from "./controls.ts";
import type { StepPreviewer } from "./domain.ts";
import { presentStepV2, presentWorkflowListItemV2, presentWorkflowV2 } from "./presenter-v2.ts";
import { createInputOf, patchInputOf, updateInputOf } from "./requests-v2.ts";
import {
  V2CreateWorkflowBody,
  V2GetWorkflowQuery,
  V2ListWorkflowsQuery,
  V2PatchWorkflowBody,
  V2Preview,
  V2PreviewBody,
  V2Step,
  V2StepParams,
  V2UpdateWorkflowBody,
  V2Workflow,
  V2WorkflowList,
  V2WorkflowParams,
} from "./schemas-v2.ts";
import {
  createWorkflow,
  deleteWorkflow,
  getStepWithControls,
  getWorkflow,
  getWorkflowIn,
  getWorkflowStep,
  searchWorkflows,
  updateWorkflow,
} from "./service.ts";

// Novu's v2 workflow routes (@novu/api 3's `workflows`): the same workflows and service as v1's,
// shown by presenter-v2.ts.

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Keys that would reach an object's prototype: never followed or assigned. */
const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Sets a key as an own property, whatever its name. */
const put = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/** The payload a preview renders with: each trigger variable the payload lacks shown as `{{its name}}`. */
function examplePayload(variables: readonly { name: string }[], given: Record<string, unknown>) {
  const example: Record<string, unknown> = {};
  for (const { name } of variables) {
    const path = name.split(".");
    if (path.some((key) => UNSAFE_KEYS.has(key))) continue;
    let at = example;
    for (const [i, key] of path.entries()) {
      if (i === path.length - 1) {
        if (!Object.hasOwn(at, key)) put(at, key, `{{${name}}}`);
      } else {
        if (!isObject(at[key])) put(at, key, {});
        at = at[key] as Record<string, unknown>;
      }
    }
  }
  return merge(example, given);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) put(out, key, value);
  for (const [key, value] of Object.entries(over)) {
    const known = Object.hasOwn(out, key) ? out[key] : undefined;
    put(out, key, isObject(value) && isObject(known) ? merge(known, value) : value);
  }
  return out;
}

const TAGS = ["Workflows (v2)"];

/** `preview` renders a step as a run would (the engine's, handed in by app.ts). */
export const workflowV2Routes: RoutePluginWith<{ preview: StepPreviewer }> = async (app, { preview }) => {
  app.post(
    "/workflows",
    {
      schema: {
        operationId: "createWorkflowV2",
        tags: TAGS,
        summary: "Create a workflow (Novu's v2 shape: steps with their control values)",
        description:
          "The same workflow as `POST /v1/workflows` makes, in the environment's `General` group; `workflowId` " +
          "is its trigger identifier. Control values by step type: in_app `subject, body, avatar, primaryAction, " +
          "secondaryAction, redirect, data`; email `subject, body, preheader, from.name`; sms and chat `body`; " +
          "push `subject, body`; delay `amount, unit` (or `dynamicKey`, a payload path holding the date to wait " +
          "for); digest `amount, unit, digestKey, lookBackWindow`; custom any.",
        headers: IdempotencyKeyHeaders,
        body: V2CreateWorkflowBody,
        response: {
          201: replayable(described(Envelope(V2Workflow), "The workflow as stored")),
          ...errorResponsesOf({
            400: "Invalid body: a control value, a template, a timing, or what Tidings does not do",
            409: "A workflow with this workflowId exists; or the Idempotency-Key is still in flight",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => {
        const deps = depsOf(app, db);
        const group = await defaultGroup(deps, request.tenant);
        const created = await createWorkflow(deps, request.tenant, createInputOf(request.body, group.id));
        return { data: presentWorkflowV2(created) };
      }),
  );

  app.get(
    "/workflows",
    {
      schema: {
        operationId: "listWorkflowsV2",
        tags: TAGS,
        summary: "Search workflows",
        description:
          "`query` matches the name or workflowId (any case); `status` (ACTIVE, INACTIVE) and `tags` (any of " +
          "them) filter; `orderBy` createdAt (the default), updatedAt or name.",
        querystring: V2ListWorkflowsQuery,
        response: {
          200: described(Envelope(V2WorkflowList), "One page of workflows and how many match"),
          ...errorResponsesOf({ 400: "A parameter out of range" }),
        },
      },
    },
    async (request) => {
      const found = await searchWorkflows(depsOf(app), request.tenant, request.query);
      return {
        data: { workflows: found.workflows.map(presentWorkflowListItemV2), totalCount: found.totalCount },
      };
    },
  );

  app.get(
    "/workflows/:workflowId",
    {
      schema: {
        operationId: "getWorkflowV2",
        tags: TAGS,
        summary: "Get a workflow by _id or workflowId",
        description:
          "With `environmentId` (another environment of the organization), the workflow of that environment " +
          "with this workflowId: the Production copy of a published workflow, say.",
        params: V2WorkflowParams,
        querystring: V2GetWorkflowQuery,
        response: {
          200: described(Envelope(V2Workflow), "The workflow"),
          ...errorResponsesOf({ 404: "No such workflow (or environment) in the organization" }),
        },
      },
    },
    async (request) => {
      const { workflowId } = request.params;
      const { environmentId } = request.query;
      const deps = depsOf(app);
      const workflow =
        environmentId === undefined
          ? await getWorkflow(deps, request.tenant, workflowId)
          : await getWorkflowIn(deps, request.tenant, environmentId, workflowId);
      return { data: presentWorkflowV2(workflow) };
    },
  );

  app.put(
    "/workflows/:workflowId",
    {
      schema: {
        operationId: "updateWorkflowV2",
        tags: TAGS,
        summary: "Replace a workflow's steps and fields",
        description:
          "Sent steps replace the steps. A step that names a current step (its `_id`, else its `stepId`) keeps " +
          "its ids and what v2 does not show (v1 filters, an email's editor blocks, template fields without a " +
          "control value); the control values that differ from what the step shows are written. A step " +
          "without control values keeps its content. `workflowId` renames the trigger identifier.",
        params: V2WorkflowParams,
        body: V2UpdateWorkflowBody,
        response: {
          200: described(Envelope(V2Workflow), "The workflow as stored"),
          ...errorResponsesOf({
            400: "Invalid body; or the workflowId is taken",
            404: "No such workflow in the environment",
          }),
        },
      },
    },
    async (request) => {
      const deps = depsOf(app);
      const current = await getWorkflow(deps, request.tenant, request.params.workflowId);
      const updated = await updateWorkflow(
        deps,
        request.tenant,
        current.id,
        updateInputOf(request.body, current),
        "workflowId",
      );
      return { data: presentWorkflowV2(updated) };
    },
  );

  app.patch(
    "/workflows/:workflowId",
    {
      schema: {
        operationId: "patchWorkflowV2",
        tags: TAGS,
        summary: "Change some of a workflow's fields (active, name, description, tags)",
        params: V2WorkflowParams,
        body: V2PatchWorkflowBody,
        response: {
          200: described(Envelope(V2Workflow), "The workflow as stored"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such workflow in the environment" }),
        },
      },
    },
    async (request) => {
      const updated = await updateWorkflow(
        depsOf(app),
        request.tenant,
        request.params.workflowId,
        patchInputOf(request.body),
      );
      return { data: presentWorkflowV2(updated) };
    },
  );

  app.delete(
    "/workflows/:workflowId",
    {
      schema: {
        operationId: "deleteWorkflowV2",
        tags: TAGS,
        summary: "Delete a workflow",
        description: "The same soft delete as `DELETE /v1/workflows/:id`.",
        params: V2WorkflowParams,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({ 404: "No such workflow in the environment" }),
        },
      },
    },
    async (request, reply) => {
      await deleteWorkflow(depsOf(app), request.tenant, request.params.workflowId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/workflows/:workflowId/steps/:stepId",
    {
      schema: {
        operationId: "getWorkflowStepV2",
        tags: TAGS,
        summary: "A step of a workflow, by its stepId or _id",
        params: V2StepParams,
        response: {
          200: described(Envelope(V2Step), "The step with its control values and variables"),
          ...errorResponsesOf({ 404: "No such workflow in the environment, or no such step in it" }),
        },
      },
    },
    async (request) => {
      const { workflowId, stepId } = request.params;
      const { workflow, step } = await getWorkflowStep(depsOf(app), request.tenant, workflowId, stepId);
      return { data: presentStepV2(workflow, step) };
    },
  );

  app.post(
    "/workflows/:workflowId/step/:stepId/preview",
    {
      schema: {
        operationId: "previewWorkflowStepV2",
        tags: TAGS,
        summary: "Render a step with a payload, as it would run",
        description:
          "`result.preview` holds the rendered content (in-app `subject, body, avatar, primaryAction, " +
          "secondaryAction, redirect, data`; email `subject, body`; push `subject, body`; sms and chat " +
          "`body`); a delay or digest shows its control values. The render limits of a run apply.",
        params: V2StepParams,
        body: V2PreviewBody,
        response: {
          201: described(Envelope(V2Preview), "The rendered step and the data it was rendered with"),
          ...errorResponsesOf({
            400: "Invalid body or control values, or a template that does not compile",
            404: "No such workflow in the environment, or no such step in it",
            422: "The template ran into a render limit",
          }),
        },
      },
    },
    async (request, reply) => {
      const { workflowId, stepId } = request.params;
      const { workflow, step } = await getStepWithControls(
        depsOf(app),
        request.tenant,
        workflowId,
        stepId,
        request.body.controlValues,
      );
      const given = request.body.previewPayload ?? {};
      const subscriber = { subscriberId: "subscriber-id", ...given.subscriber };
      const payload = examplePayload(workflow.triggers[0]?.variables ?? [], given.payload ?? {});
      const rendered = await preview(step.template, {
        payload,
        subscriber,
        ...(given.actor ? { actor: given.actor } : {}),
      });
      if (rendered && !rendered.ok) throw unprocessable(rendered.reason);
      return reply.code(201).send({
        data: {
          previewPayloadExample: { subscriber, payload },
          result: {
            type: v2TypeOf(step.template.type),
            preview: rendered?.ok ? rendered.preview : controlValuesOf(step),
          },
        },
      });
    },
  );
};
