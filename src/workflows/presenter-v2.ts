import { controlValuesOf, v2TypeOf } from "./controls.ts";
import { CHANNELS, type Step, type Workflow } from "./domain.ts";
import type { V2StepValue, V2WorkflowListItemValue, V2WorkflowValue } from "./schemas-v2.ts";
import { stepsWithIds } from "./steps.ts";

// The one workflow as Novu's v2 API shows it (the shapes @novu/api 3 parses). v1's presenter
// (presenter.ts) shows the same workflow in Novu's v1 shape.

const ORIGIN = "novu-cloud" as const;

const SUBSCRIBER_FIELDS = ["subscriberId", "firstName", "lastName", "email", "phone", "avatar", "locale"];

/** What a step's templates can read, as a JSON schema: the subscriber's fields and the payload's variables. */
function variablesOf(workflow: Workflow): Record<string, unknown> {
  const payload = workflow.triggers[0]?.variables ?? [];
  return {
    type: "object",
    properties: {
      subscriber: {
        type: "object",
        properties: {
          ...Object.fromEntries(SUBSCRIBER_FIELDS.map((field) => [field, { type: "string" }])),
          data: { type: "object", additionalProperties: true },
        },
      },
      payload: {
        type: "object",
        properties: Object.fromEntries(payload.map(({ name }) => [name, { type: "string" }])),
        additionalProperties: true,
      },
    },
  };
}

/** Novu's origin: "external" for a workflow defined in code (synced from its bridge). */
const originOf = (workflow: Workflow) => (workflow.origin === "external" ? "external" : ORIGIN);

export function presentStepV2(workflow: Workflow, step: Step & { stepId: string }): V2StepValue {
  // A step defined in code: the control values kept for its bridge.
  const values = step.code ? step.code.controlValues : controlValuesOf(step);
  return {
    _id: step._id,
    stepId: step.stepId,
    slug: step.stepId,
    name: step.name,
    type: v2TypeOf(step.template.type),
    origin: originOf(workflow),
    workflowId: workflow.identifier,
    workflowDatabaseId: workflow.id,
    controlValues: values,
    controls: { values },
    variables: variablesOf(workflow),
    issues: {},
  };
}

export function presentWorkflowV2(workflow: Workflow): V2WorkflowValue {
  return {
    _id: workflow.id,
    workflowId: workflow.identifier,
    slug: workflow.identifier,
    name: workflow.name,
    description: workflow.description,
    tags: workflow.tags,
    active: workflow.active,
    status: workflow.active ? "ACTIVE" : "INACTIVE",
    severity: workflow.severity,
    origin: originOf(workflow),
    isTranslationEnabled: false,
    validatePayload: workflow.payloadSchema !== null,
    steps: stepsWithIds(workflow).map((step) => presentStepV2(workflow, step)),
    preferences: {
      user: null,
      default: {
        all: { enabled: true, readOnly: workflow.critical },
        channels: Object.fromEntries(
          CHANNELS.map((channel) => [channel, { enabled: workflow.preferenceSettings[channel] }]),
        ),
      },
    },
    issues: {},
    lastTriggeredAt: null,
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
  };
}

export function presentWorkflowListItemV2(workflow: Workflow): V2WorkflowListItemValue {
  const steps = stepsWithIds(workflow);
  return {
    _id: workflow.id,
    workflowId: workflow.identifier,
    slug: workflow.identifier,
    name: workflow.name,
    tags: workflow.tags,
    status: workflow.active ? "ACTIVE" : "INACTIVE",
    origin: originOf(workflow),
    isTranslationEnabled: false,
    stepTypeOverviews: steps.map((step) => v2TypeOf(step.template.type)),
    steps: steps.map((step) => ({ slug: step.stepId, type: v2TypeOf(step.template.type) })),
    lastTriggeredAt: null,
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
  };
}
