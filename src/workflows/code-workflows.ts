import { BridgeError, type BridgeOptions, bridgeUrlProblem, callBridge } from "../bridge-client.ts";
import { isoNow } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { badRequest, type FieldError, invalidField, mention, notFound } from "../errors.ts";
import { isObjectId, newObjectId, newUuid } from "../ids.ts";
import { requireSchema } from "../json-schema.ts";
import { defaultGroup } from "../notification-groups/service.ts";
import { environmentSecretKey, getBridgeUrl, type KeySealer, setBridgeUrl } from "../tenancy/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { PreferenceSettings, Severity, Step, StepType, Workflow } from "./domain.ts";
import { IDENTIFIER_PATTERN, SEVERITIES } from "./enums.ts";
import * as workflows from "./repository.ts";
import { STEP_ID_PATTERN } from "./steps.ts";
import { buildTriggers } from "./triggers.ts";

/**
 * Workflows defined in code (docs/bridge.md): an app serves them with @novu/framework, and a sync
 * asks its bridge what they are (`discover`) and stores each as a workflow of origin "external":
 * listed, triggered and shown like any other, but its steps are the bridge's (read-only here), and
 * each step runs through the bridge. What stays editable here: whether it is active, and the
 * control values of its steps. A code workflow the bridge no longer lists is deleted by the sync.
 */

/** What a sync needs beyond the database: how to call bridges, and how to open the signing key. */
export interface BridgeTools {
  readonly bridge: BridgeOptions;
  readonly sealer: KeySealer | undefined;
}

/** One workflow as the bridge describes it, checked. */
export interface DiscoveredWorkflow {
  workflowId: string;
  name: string;
  description: string;
  tags: string[];
  severity: Severity;
  preferenceSettings: PreferenceSettings;
  critical: boolean;
  payloadSchema: Record<string, unknown> | null;
  steps: DiscoveredStep[];
}

export interface DiscoveredStep {
  stepId: string;
  /** The framework's type (`in_app`, `http_request`, …). */
  type: string;
  controlSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
}

/** The framework's step types, and the step type each runs as here. */
const STEP_TYPES: Record<string, StepType> = {
  email: "email",
  sms: "sms",
  push: "push",
  chat: "chat",
  in_app: "in_app",
  digest: "digest",
  delay: "delay",
  throttle: "throttle",
  custom: "custom",
  http_request: "custom",
  tool: "custom",
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const schemaOf = (value: unknown): Record<string, unknown> | null => {
  const schema = isObject(value) && isObject(value.schema) ? value.schema : null;
  return schema === null || Object.keys(schema).length === 0 ? null : schema;
};

const IDENTIFIER = new RegExp(IDENTIFIER_PATTERN);

/**
 * The bridge's discover answer as workflows, or a 400 saying what in it cannot be stored (the
 * sync then stores nothing).
 */
export function parseDiscover(answer: unknown): DiscoveredWorkflow[] {
  if (!isObject(answer) || !Array.isArray(answer.workflows)) {
    throw badRequest(
      "Bridge discover failed: its answer has no `workflows` list (is the URL the bridge endpoint?)",
    );
  }
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  const found: DiscoveredWorkflow[] = [];
  for (const [i, raw] of answer.workflows.entries()) {
    const at = `workflows[${i}]`;
    if (!isObject(raw)) {
      problems.push({ field: at, message: "is not an object" });
      continue;
    }
    const workflowId = typeof raw.workflowId === "string" ? raw.workflowId : "";
    if (!IDENTIFIER.test(workflowId) || isObjectId(workflowId)) {
      problems.push({
        field: `${at}.workflowId`,
        message: "must be 1 to 100 letters, digits, hyphens or underscores, and not look like an id",
      });
      continue;
    }
    if (seen.has(workflowId)) problems.push({ field: `${at}.workflowId`, message: `repeats ${workflowId}` });
    seen.add(workflowId);
    const steps: DiscoveredStep[] = [];
    const stepIds = new Set<string>();
    for (const [j, step] of (Array.isArray(raw.steps) ? raw.steps : []).entries()) {
      const stepAt = `${at}.steps[${j}]`;
      const stepId = isObject(step) && typeof step.stepId === "string" ? step.stepId : "";
      const type = isObject(step) && typeof step.type === "string" ? step.type : "";
      if (!STEP_ID_PATTERN.test(stepId) || stepIds.has(stepId)) {
        problems.push({ field: `${stepAt}.stepId`, message: "must be a step id unique in its workflow" });
        continue;
      }
      if (STEP_TYPES[type] === undefined) {
        problems.push({
          field: `${stepAt}.type`,
          message: `is a step type this service does not run (${type})`,
        });
        continue;
      }
      stepIds.add(stepId);
      steps.push({
        stepId,
        type,
        controlSchema: schemaOf(isObject(step) ? step.controls : undefined),
        outputSchema: schemaOf(isObject(step) ? step.outputs : undefined),
      });
    }
    const preferences = isObject(raw.preferences) ? raw.preferences : {};
    const all = isObject(preferences.all) ? preferences.all : {};
    const channels = isObject(preferences.channels) ? preferences.channels : {};
    const enabled = (channel: string) => {
      const own = isObject(channels[channel])
        ? (channels[channel] as Record<string, unknown>).enabled
        : undefined;
      if (typeof own === "boolean") return own;
      return typeof all.enabled === "boolean" ? all.enabled : true;
    };
    found.push({
      workflowId,
      name:
        typeof raw.name === "string" && raw.name.trim() !== "" ? raw.name.trim().slice(0, 200) : workflowId,
      description: typeof raw.description === "string" ? raw.description.slice(0, 1000) : "",
      tags: Array.isArray(raw.tags)
        ? [...new Set(raw.tags.filter((t): t is string => typeof t === "string" && t.trim() !== ""))]
        : [],
      severity: (SEVERITIES as readonly unknown[]).includes(raw.severity)
        ? (raw.severity as Severity)
        : "none",
      preferenceSettings: {
        email: enabled("email"),
        sms: enabled("sms"),
        in_app: enabled("in_app"),
        chat: enabled("chat"),
        push: enabled("push"),
      },
      critical: all.readOnly === true,
      payloadSchema: schemaOf(raw.payload),
      steps,
    });
  }
  const first = problems[0];
  if (first)
    throw badRequest(
      `Bridge discover answered workflows that cannot be stored: ${first.field} ${first.message}`,
      problems,
    );
  return found;
}

/** Asks the bridge for its workflows, signed with the environment's secret key; a 400 saying why it failed. */
export async function discoverBridge(
  deps: Deps,
  tenant: Tenant,
  tools: BridgeTools,
  bridgeUrl: string,
): Promise<DiscoveredWorkflow[]> {
  const problem = bridgeUrlProblem(bridgeUrl, tools.bridge.outbound);
  if (problem !== undefined) throw invalidField("bridgeUrl", problem);
  const secretKey = await environmentSecretKey(deps, tenant.environmentId, tools.sealer);
  if (secretKey === undefined) {
    throw badRequest(
      "Bridge discover failed: the environment has no API key this service can open to sign the call " +
        "(regenerate the key with TIDINGS_SECRET_KEY set)",
    );
  }
  let answer: unknown;
  try {
    // Asked by someone waiting for the answer: said at once, not after backing off and retrying.
    answer = await callBridge(
      { url: bridgeUrl, action: "discover", secretKey },
      { ...tools.bridge, retries: 0 },
    );
  } catch (error) {
    if (error instanceof BridgeError) throw badRequest(`Bridge discover failed: ${error.message}`);
    throw error;
  }
  return parseDiscover(answer);
}

/** What a sync would change: workflow ids added, changed (steps or definition), removed, unchanged. */
export interface BridgeDiff {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
}

function definitionOf(found: DiscoveredWorkflow): Record<string, unknown> {
  return { ...found };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export async function diffBridge(
  deps: Deps,
  tenant: Tenant,
  tools: BridgeTools,
  bridgeUrl: string,
): Promise<BridgeDiff> {
  const discovered = await discoverBridge(deps, tenant, tools, bridgeUrl);
  const stored = await workflows.listCodeWorkflows(deps.db, tenant.environmentId);
  const byId = new Map(stored.map((w) => [w.identifier, w]));
  const diff: BridgeDiff = { added: [], updated: [], removed: [], unchanged: [] };
  for (const found of discovered) {
    const current = byId.get(found.workflowId);
    if (!current) diff.added.push(found.workflowId);
    else if (same(current.codeDefinition, definitionOf(found))) diff.unchanged.push(found.workflowId);
    else diff.updated.push(found.workflowId);
  }
  const listed = new Set(discovered.map((w) => w.workflowId));
  diff.removed = stored.filter((w) => !listed.has(w.identifier)).map((w) => w.identifier);
  return diff;
}

/** A discovered step as stored: its ids and control values kept across syncs, by step id. */
function stepOf(found: DiscoveredStep, previous: Step | undefined): Step {
  return {
    _id: previous?._id ?? newObjectId(),
    stepId: found.stepId,
    uuid: previous?.uuid ?? newUuid(),
    name: found.stepId,
    _templateId: previous?._templateId ?? newObjectId(),
    active: previous?.active ?? true,
    shouldStopOnFail: false,
    template: { type: STEP_TYPES[found.type] as StepType },
    filters: [],
    _parentId: {},
    metadata: {
      amount: 0,
      unit: "seconds",
      digestKey: "",
      type: "regular",
      backoff: false,
      backoffAmount: 0,
      backoffUnit: "seconds",
      updateMode: false,
    },
    replyCallback: {},
    code: { type: found.type, controlValues: previous?.code?.controlValues ?? {} },
  };
}

/**
 * Registers the bridge and stores what it lists (Novu's `POST /v1/bridge/sync`): discovers first,
 * then writes every workflow, and deletes the code workflows it no longer lists, in one
 * transaction. Returns the environment's code workflows as stored.
 */
export async function syncBridge(
  deps: Deps,
  tenant: Tenant,
  tools: BridgeTools,
  bridgeUrl: string,
): Promise<Workflow[]> {
  const discovered = await discoverBridge(deps, tenant, tools, bridgeUrl);
  const group = await defaultGroup(deps, tenant);
  const now = isoNow(deps.clock);
  return deps.db.transaction().execute(async (trx) => {
    const stored = await workflows.listCodeWorkflows(trx, tenant.environmentId);
    const byId = new Map(stored.map((w) => [w.identifier, w]));
    const written: string[] = [];
    for (const found of discovered) {
      const current = byId.get(found.workflowId);
      const previousSteps = new Map((current?.steps ?? []).map((s) => [s.stepId, s]));
      const steps = found.steps.map((s) => stepOf(s, previousSteps.get(s.stepId)));
      const document: workflows.WorkflowDocument = {
        name: found.name,
        description: found.description,
        identifier: found.workflowId,
        active: current?.active ?? true,
        draft: !(current?.active ?? true),
        critical: found.critical,
        severity: found.severity,
        tags: found.tags,
        steps,
        triggers: buildTriggers(found.workflowId, steps),
        preferenceSettings: found.preferenceSettings,
        data: current?.data ?? {},
        notificationGroupId: current?.notificationGroupId ?? group.id,
      };
      let id: string;
      if (current) {
        await workflows.updateWorkflow(trx, tenant.environmentId, current.id, document, now);
        id = current.id;
      } else {
        const created = await workflows.insertWorkflow(trx, {
          ...document,
          id: newObjectId(),
          organizationId: tenant.organizationId,
          environmentId: tenant.environmentId,
          creatorId: tenant.actorId,
          now,
        });
        if (!created) {
          throw badRequest(
            `Bridge sync refused: workflow ${mention(found.workflowId, "of the bridge")} has the trigger ` +
              "identifier of a workflow stored here (not defined in code): rename one of them",
          );
        }
        id = created.id;
      }
      await workflows.setCodeColumns(trx, tenant.environmentId, id, {
        origin: "external",
        payloadSchema: found.payloadSchema,
        definition: definitionOf(found),
      });
      written.push(id);
    }
    const listed = new Set(discovered.map((w) => w.workflowId));
    for (const gone of stored.filter((w) => !listed.has(w.identifier))) {
      await workflows.softDeleteWorkflow(trx, tenant.environmentId, { id: gone.id }, tenant.actorId, now);
    }
    await setBridgeUrl({ ...deps, db: trx }, tenant.environmentId, bridgeUrl);
    const result = await workflows.listCodeWorkflows(trx, tenant.environmentId);
    return result;
  });
}

/**
 * Stores the control values of a code workflow's step (Novu's `PUT /v1/bridge/controls/...`): sent
 * with every execution of the step from then on; the bridge checks them against its schema.
 */
export async function setStepControls(
  deps: Deps,
  tenant: Tenant,
  workflowId: string,
  stepId: string,
  controlValues: Record<string, unknown>,
): Promise<Workflow> {
  return deps.db.transaction().execute(async (trx) => {
    const ref = isObjectId(workflowId) ? { id: workflowId } : { identifier: workflowId };
    const current = await workflows.findWorkflow(trx, tenant.environmentId, ref, { forUpdate: true });
    if (current?.origin !== "external")
      throw notFound(
        `No workflow defined in code ${mention(workflowId, "with this id")} in this environment`,
      );
    const index = current.steps.findIndex((s) => s.stepId === stepId || s._id === stepId);
    const step = current.steps[index];
    // What the app would refuse at every execution of the step is refused now.
    const definition = (current.codeDefinition?.steps as DiscoveredStep[] | undefined)?.find(
      (s) => s.stepId === step?.stepId,
    );
    if (step?.code)
      requireSchema(definition?.controlSchema, controlValues, "controls", "the step's control schema");
    if (!step?.code)
      throw notFound(
        `Step ${mention(stepId, "with this id")} was not found in workflow ${current.identifier}`,
      );
    const steps = current.steps.map((s, i) =>
      i === index ? { ...s, code: { type: step.code?.type ?? s.template.type, controlValues } } : s,
    );
    const updated = await workflows.updateWorkflow(
      trx,
      tenant.environmentId,
      current.id,
      { ...documentOf(current), steps },
      isoNow(deps.clock),
    );
    if (!updated)
      throw notFound(
        `No workflow defined in code ${mention(workflowId, "with this id")} in this environment`,
      );
    return updated;
  });
}

function documentOf(workflow: Workflow): workflows.WorkflowDocument {
  return {
    name: workflow.name,
    description: workflow.description,
    identifier: workflow.identifier,
    active: workflow.active,
    draft: workflow.draft,
    critical: workflow.critical,
    severity: workflow.severity,
    tags: workflow.tags,
    steps: workflow.steps,
    triggers: workflow.triggers,
    preferenceSettings: workflow.preferenceSettings,
    data: workflow.data,
    notificationGroupId: workflow.notificationGroupId,
  };
}

/** What a preview of a code step renders with (all optional: the framework mocks what is missing). */
export interface BridgePreviewInput {
  payload?: Record<string, unknown> | undefined;
  controls?: Record<string, unknown> | undefined;
  subscriber?: Record<string, unknown> | undefined;
  state?: unknown[] | undefined;
}

/**
 * Renders a step of a code workflow through its bridge (`action=preview`), with the payload the
 * user typed and the stored control values unless others are given: the bridge's answer as it is
 * (`{outputs, providers, options, metadata}`), or a 400 saying why the bridge could not render.
 */
export async function previewCodeStep(
  deps: Deps,
  tenant: Tenant,
  tools: BridgeTools,
  workflowId: string,
  stepId: string,
  input: BridgePreviewInput,
): Promise<Record<string, unknown>> {
  const ref = isObjectId(workflowId) ? { id: workflowId } : { identifier: workflowId };
  const workflow = await workflows.findWorkflow(deps.db, tenant.environmentId, ref);
  if (workflow?.origin !== "external")
    throw notFound(`No workflow defined in code ${mention(workflowId, "with this id")} in this environment`);
  const step = workflow.steps.find((s) => s.stepId === stepId || s._id === stepId);
  if (!step?.code)
    throw notFound(
      `Step ${mention(stepId, "with this id")} was not found in workflow ${workflow.identifier}`,
    );
  const bridgeUrl = await getBridgeUrl(deps, tenant.environmentId);
  if (bridgeUrl === "")
    throw badRequest("The environment has no bridge: sync one first (POST /v1/bridge/sync)");
  const secretKey = await environmentSecretKey(deps, tenant.environmentId, tools.sealer);
  if (secretKey === undefined)
    throw badRequest("The environment has no API key this service can open to sign the call");
  const body = {
    workflowId: workflow.identifier,
    stepId: step.stepId ?? stepId,
    action: "preview",
    payload: input.payload ?? {},
    controls: input.controls ?? step.code.controlValues,
    subscriber: { subscriberId: "subscriber-id", ...input.subscriber },
    state: input.state ?? [],
    context: {},
    env: {},
  };
  try {
    const answer = await callBridge(
      {
        url: bridgeUrl,
        action: "preview",
        workflowId: body.workflowId,
        stepId: body.stepId,
        body,
        secretKey,
      },
      { ...tools.bridge, retries: 0 },
    );
    return isObject(answer) ? answer : { outputs: answer };
  } catch (error) {
    if (error instanceof BridgeError) throw badRequest(`Bridge preview failed: ${error.message}`);
    throw error;
  }
}
