import { badRequest, type FieldError } from "../errors.ts";
import { stepDraftOf, type V2StepInput } from "./controls.ts";
import { CHANNELS, type PreferenceSettings, type Workflow } from "./domain.ts";
import type {
  V2CreateWorkflowInput,
  V2PatchWorkflowInput,
  V2PreferencesValue,
  V2StepBodyValue,
  V2UpdateWorkflowInput,
} from "./schemas-v2.ts";
import type { WorkflowCreate, WorkflowUpdate } from "./service.ts";
import { type StepDraft, stepsWithIds } from "./steps.ts";

// Novu's v2 requests as the one workflow service takes them (the inverse of presenter-v2.ts): a v2
// step becomes the v1 step it stands for, merged into the stored step it names, and v2's
// preferences become the channel defaults and `critical`.

function throwIfAny(errors: FieldError[]) {
  const first = errors[0];
  if (first) throw badRequest(`${first.field} ${first.message}`, errors);
}

/** What Tidings does not do is refused when asked for, and let through at its off value. */
function refuseUnsupported(body: {
  validatePayload?: boolean | undefined;
  payloadSchema?: Record<string, unknown> | null | undefined;
  isTranslationEnabled?: boolean | undefined;
}) {
  const errors: FieldError[] = [];
  if (body.validatePayload === true)
    errors.push({
      field: "validatePayload",
      message: "must be false: payloads are not validated against a schema",
    });
  if (body.payloadSchema && Object.keys(body.payloadSchema).length > 0)
    errors.push({
      field: "payloadSchema",
      message: "must be null or {}: payloads are not validated against a schema",
    });
  if (body.isTranslationEnabled === true)
    errors.push({ field: "isTranslationEnabled", message: "must be false: translations are not supported" });
  throwIfAny(errors);
}

/**
 * The v1 steps for v2 steps: each names a current step by `_id`, else by `stepId`, and is merged
 * into it (stepDraftOf); the others are new.
 */
export function stepDraftsOf(steps: readonly V2StepBodyValue[], current: Workflow | undefined): StepDraft[] {
  const stored = current ? stepsWithIds(current) : [];
  const errors: FieldError[] = [];
  const drafts = steps.map((step, i) => {
    const previous =
      (step._id !== undefined ? stored.find((s) => s._id === step._id) : undefined) ??
      (step.stepId !== undefined ? stored.find((s) => s.stepId === step.stepId) : undefined);
    const input: V2StepInput = {
      _id: step._id,
      stepId: step.stepId,
      name: step.name,
      type: step.type,
      controlValues: step.controlValues,
    };
    const built = stepDraftOf(input, previous, `steps[${i}]`);
    errors.push(...built.errors);
    return built.draft;
  });
  throwIfAny(errors);
  return drafts;
}

/** v2's preferences (the user's over the workflow's) as the channel defaults and `critical`. */
function preferencesOf(
  preferences: V2PreferencesValue | undefined,
  base?: PreferenceSettings,
): { preferenceSettings?: Partial<PreferenceSettings>; critical?: boolean } {
  const chosen = preferences?.user ?? preferences?.workflow;
  if (!chosen) return {};
  const allOff = chosen.all?.enabled === false;
  const channels = chosen.channels ?? {};
  const settings: Partial<PreferenceSettings> = {};
  for (const channel of CHANNELS) {
    const sent = channels[channel]?.enabled;
    if (sent !== undefined) settings[channel] = sent;
    else if (allOff) settings[channel] = false;
    else if (base) settings[channel] = base[channel];
  }
  return {
    preferenceSettings: settings,
    ...(chosen.all?.readOnly !== undefined ? { critical: chosen.all.readOnly } : {}),
  };
}

export function createInputOf(body: V2CreateWorkflowInput, notificationGroupId: string): WorkflowCreate {
  refuseUnsupported(body);
  return {
    name: body.name,
    identifier: body.workflowId,
    notificationGroupId,
    steps: stepDraftsOf(body.steps, undefined),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags !== undefined ? { tags: body.tags } : {}),
    active: body.active ?? false,
    ...(body.severity !== undefined ? { severity: body.severity } : {}),
    ...preferencesOf(body.preferences),
  };
}

/**
 * A PUT: the workflow as sent, its steps merged into the current ones. Fields it leaves out keep
 * their values, as v1's update does (`active` aside: Novu's SDK always sends it).
 */
export function updateInputOf(body: V2UpdateWorkflowInput, current: Workflow): WorkflowUpdate {
  refuseUnsupported(body);
  return {
    name: body.name,
    steps: stepDraftsOf(body.steps, current),
    ...(body.workflowId !== undefined ? { identifier: body.workflowId } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags !== undefined ? { tags: body.tags } : {}),
    ...(body.active !== undefined ? { active: body.active } : {}),
    ...(body.severity !== undefined ? { severity: body.severity } : {}),
    ...preferencesOf(body.preferences, current.preferenceSettings),
  };
}

export function patchInputOf(body: V2PatchWorkflowInput): WorkflowUpdate {
  refuseUnsupported(body);
  return {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.tags !== undefined ? { tags: body.tags } : {}),
    ...(body.active !== undefined ? { active: body.active } : {}),
  };
}
