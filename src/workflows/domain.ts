import type { NotificationGroup } from "../notification-groups/domain.ts";
import type {
  FILTER_ON,
  FILTER_OPERATORS,
  FILTER_TYPES,
  FILTER_VALUES,
  METADATA_TYPES,
  SEVERITIES,
  STEP_TYPES,
  TIME_UNITS,
} from "./enums.ts";

export { SEVERITIES, TIME_UNITS } from "./enums.ts";

/**
 * What a workflow is, for the services and the engine. Steps, filters and metadata keep the seed's
 * own shape (it is the language the spec and Novu's users speak, and how a step is stored); the
 * workflow around them is ours, and the presenter makes Novu's response from it at the HTTP edge.
 */

export type StepType = (typeof STEP_TYPES)[number];
export type FilterType = (typeof FILTER_TYPES)[number];
export type FilterValue = (typeof FILTER_VALUES)[number];
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export type FilterOn = (typeof FILTER_ON)[number];
export type TimeUnit = (typeof TIME_UNITS)[number];
export type MetadataType = (typeof METADATA_TYPES)[number];
export type Severity = (typeof SEVERITIES)[number];

/** One condition: `field` (a dot path) read from `on`, compared with `value` by `operator`. */
export interface FilterChild {
  field: string;
  value: string;
  operator: FilterOperator;
  on: FilterOn;
}

/** A step runs when any of its filters passes; a filter combines its children with `value`. */
export interface Filter {
  isNegated: boolean;
  type: FilterType;
  value: FilterValue;
  children: FilterChild[];
}

/**
 * The seed's eight fields, always all present; `delayPath` for scheduled delays (docs/engine.md, "Delays and
 * digests").
 */
export interface StepMetadata {
  amount: number;
  unit: TimeUnit;
  digestKey: string;
  type: MetadataType;
  backoff: boolean;
  backoffAmount: number;
  backoffUnit: TimeUnit;
  updateMode: boolean;
  delayPath?: string;
  /** Throttle steps: how many runs the window (amount × unit) lets through; the rest end throttled. */
  threshold?: number;
  /** Throttle steps: a payload path whose value splits the count (one window per value); "" for none. */
  throttleKey?: string;
}

/**
 * A step defined in code (a workflow synced from a bridge): what the bridge said of it at the last
 * sync, and the control values this environment keeps for it. Its content comes from the bridge.
 */
export interface CodeStep {
  /** The framework's own step type (`in_app`, `email`, `custom`, `http_request`, …). */
  type: string;
  /** The control values sent with every execute call of the step (editable; `{}` by default). */
  controlValues: Record<string, unknown>;
}

/** Where a workflow comes from: "" stored here, "external" defined in code and synced from its bridge. */
export type WorkflowOrigin = "" | "external";

/** The message template: its type, plus content, subject, cta and whatever the channel reads. */
export interface StepTemplate {
  type: StepType;
  [field: string]: unknown;
}

export interface Step {
  _id: string;
  /**
   * The step's id within its workflow, as Novu's v2 API names steps (`/v2/workflows/:id/steps/:stepId`):
   * unique in the workflow, kept across updates that keep the step. Not part of the v1 shape (its
   * presenter leaves it out); absent on steps stored before it existed, which get one on reading.
   */
  stepId?: string;
  uuid: string;
  name: string;
  _templateId: string;
  active: boolean;
  shouldStopOnFail: boolean;
  template: StepTemplate;
  filters: Filter[];
  _parentId: Record<string, unknown>;
  metadata: StepMetadata;
  replyCallback: Record<string, unknown>;
  /** Present on the steps of a workflow defined in code: they run through the bridge. */
  code?: CodeStep;
}

export interface TriggerVariable {
  name: string;
}

export interface Trigger {
  type: string;
  identifier: string;
  variables: TriggerVariable[];
  subscriberVariables: TriggerVariable[];
}

export const CHANNELS = ["email", "sms", "in_app", "chat", "push"] as const;
export type Channel = (typeof CHANNELS)[number];

/** The workflow's default for each channel, before a subscriber's own preferences. */
export type PreferenceSettings = Record<Channel, boolean>;

export interface Workflow {
  id: string;
  organizationId: string;
  environmentId: string;
  /** The API key that created it. */
  creatorId: string;
  name: string;
  description: string;
  /** The trigger identifier (`triggers[0].identifier`), unique among the environment's live workflows. */
  identifier: string;
  active: boolean;
  /** Always `!active` (Novu derives it so since it deprecated drafts). */
  draft: boolean;
  critical: boolean;
  /** What its notifications show in the inbox, and what the inbox filters and counts them by. */
  severity: Severity;
  tags: string[];
  steps: Step[];
  triggers: Trigger[];
  preferenceSettings: PreferenceSettings;
  data: Record<string, unknown>;
  workflowIntegrationStatus: Record<string, unknown>;
  /** "external" for a workflow defined in code (its steps are read-only here). */
  origin: WorkflowOrigin;
  /** The JSON Schema a trigger's payload must match; null for none. */
  payloadSchema: Record<string, unknown> | null;
  /** A code workflow's definition as its bridge answered at the last sync; null for others. */
  codeDefinition: Record<string, unknown> | null;
  notificationGroupId: string;
  notificationGroup: NotificationGroup;
  /** The counterpart in another environment; "" when none. */
  parentId: string;
  deleted: boolean;
  /** ISO 8601, or null while the workflow is live. */
  deletedAt: string | null;
  /** The API key that deleted it; "" while live. */
  deletedBy: string;
  createdAt: string;
  updatedAt: string;
}

/** What running a workflow reads of it: neither its group nor the document fields a run never uses. */
export type RunnableWorkflow = Pick<
  Workflow,
  | "id"
  | "name"
  | "identifier"
  | "active"
  | "critical"
  | "severity"
  | "tags"
  | "steps"
  | "triggers"
  | "preferenceSettings"
> &
  Partial<Pick<Workflow, "payloadSchema">>;

/** What a preview renders a step with: the payload, the subscriber, the actor. */
export interface PreviewData {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  actor?: Record<string, unknown>;
}

/**
 * Renders a channel step's template as a run would (the engine's `previewStep`; app.ts hands it to
 * the routes): the rendered parts, or why it cannot render; undefined for a step that sends nothing.
 */
export type StepPreviewer = (
  template: StepTemplate,
  data: PreviewData,
) => Promise<{ ok: true; preview: Record<string, unknown> } | { ok: false; reason: string } | undefined>;
