import type { operations } from "../../api-schema.ts";
import type { Workflow } from "../../types.ts";

/**
 * The workflow editor's model: the stored workflow is the starting point, and the form changes it
 * field by field. Whatever the form does not show (a button's target, an email's layout, a step's
 * uuid, fields the API keeps but the page has no control for) rides along untouched, and a save
 * sends only the workflow fields that differ from what was loaded, so nothing is lost by saving.
 */

export type UpdateBody = NonNullable<
  operations["updateWorkflow"]["requestBody"]
>["content"]["application/json"];
export type CreateBody = NonNullable<
  operations["createWorkflow"]["requestBody"]
>["content"]["application/json"];
export type StepValue = NonNullable<UpdateBody["steps"]>[number];
export type Metadata = NonNullable<StepValue["metadata"]>;
export type FilterValue = NonNullable<StepValue["filters"]>[number];
export type ConditionValue = NonNullable<FilterValue["children"]>[number];
export type StepType = StepValue["template"]["type"];
export type Unit = NonNullable<Metadata["unit"]>;
export type Severity = NonNullable<UpdateBody["severity"]>;
export type Channel = keyof NonNullable<UpdateBody["preferenceSettings"]>;

export type JsonObject = Record<string, unknown>;

export const STEP_TYPES: readonly [StepType, string][] = [
  ["in_app", "In-app"],
  ["email", "Email"],
  ["sms", "SMS"],
  ["chat", "Chat"],
  ["push", "Push"],
  ["delay", "Delay"],
  ["digest", "Digest"],
  ["throttle", "Throttle"],
  ["custom", "Custom"],
  ["trigger", "Trigger"],
];
export const UNITS: readonly Unit[] = ["seconds", "minutes", "hours", "days", "weeks", "months"];
export const OPERATORS: readonly NonNullable<ConditionValue["operator"]>[] = [
  "EQUAL",
  "NOT_EQUAL",
  "LARGER",
  "SMALLER",
  "LARGER_EQUAL",
  "SMALLER_EQUAL",
  "LIKE",
  "NOT_LIKE",
  "IN",
  "NOT_IN",
  "ANY_IN",
  "ALL_IN",
  "BETWEEN",
  "NOT_BETWEEN",
  "IS_DEFINED",
];
export const CONDITION_ON: readonly NonNullable<ConditionValue["on"]>[] = [
  "payload",
  "subscriber",
  "tenant",
  "previousStep",
  "webhook",
  "isOnline",
  "isOnlineInLast",
];
export const CHANNELS: readonly [Channel, string][] = [
  ["in_app", "In-app"],
  ["email", "Email"],
  ["sms", "SMS"],
  ["chat", "Chat"],
  ["push", "Push"],
];
export const SEVERITIES: readonly [Severity, string][] = [
  ["none", "None"],
  ["low", "Low"],
  ["medium", "Medium"],
  ["high", "High"],
];

export const typeLabel = (type: string) => STEP_TYPES.find(([t]) => t === type)?.[1] ?? type;
export const isTimer = (type: string) => type === "delay" || type === "digest";
export const isChannel = (type: string) => CHANNELS.some(([c]) => c === type);

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Deep equality of JSON values, key order aside. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => same(item, b[i]))
    );
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && same(a[key], b[key]))
  );
}

export const clone = <T>(value: T): T => structuredClone(value);

/** The text of a template field, or "" when it is not text. */
export const textOf = (value: unknown) => (typeof value === "string" ? value : "");

/** A step of the page: the step as the API takes it, and a key that stays while steps move. */
export interface StepDraft {
  key: number;
  value: StepValue;
}

let nextKey = 1;

/** The stored step as a step of an update: every field it has, as it has them. */
export function draftOf(step: Workflow["steps"][number]): StepDraft {
  return { key: nextKey++, value: clone(step) as unknown as StepValue };
}

/** A new step of this type, with what it needs to be saved. */
export function newStep(type: StepType): StepDraft {
  const template: StepValue["template"] =
    type === "email"
      ? { type, subject: "", content: "" }
      : type === "push"
        ? { type, title: "", content: "" }
        : isTimer(type) || type === "throttle" || type === "custom" || type === "trigger"
          ? { type }
          : { type, content: "" };
  const metadata: Metadata | undefined =
    type === "delay"
      ? { type: "regular", amount: 5, unit: "minutes" }
      : type === "digest"
        ? { type: "regular", amount: 10, unit: "minutes", digestKey: "" }
        : type === "throttle"
          ? { amount: 10, unit: "minutes", threshold: 1 }
          : undefined;
  return {
    key: nextKey++,
    value: { name: typeLabel(type), template, ...(metadata ? { metadata } : {}), filters: [] },
  };
}

/** The fields of a workflow the settings form edits. */
export interface Settings {
  name: string;
  identifier: string;
  notificationGroupId: string;
  description: string;
  severity: Severity;
  critical: boolean;
  tags: string[];
  preferenceSettings: Record<Channel, boolean>;
  data: JsonObject;
}

export function settingsOf(workflow: Workflow): Settings {
  return {
    name: workflow.name,
    identifier: workflow.triggers[0]?.identifier ?? "",
    notificationGroupId: workflow._notificationGroupId,
    description: workflow.description,
    severity: workflow.severity,
    critical: workflow.critical,
    tags: [...workflow.tags],
    preferenceSettings: { ...workflow.preferenceSettings },
    data: clone(workflow.data),
  };
}

export const NEW_SETTINGS: Settings = {
  name: "",
  identifier: "",
  notificationGroupId: "",
  description: "",
  severity: "none",
  critical: false,
  tags: [],
  preferenceSettings: { in_app: true, email: true, sms: true, chat: true, push: true },
  data: {},
};

/** The steps as the API takes them. */
export const stepsOf = (drafts: readonly StepDraft[]): StepValue[] => drafts.map((d) => d.value);

/**
 * What a save of an existing workflow sends: the settings that differ from the stored workflow, and
 * the steps when any of them changed (sent steps replace the stored ones, so all of them go, each
 * as complete as it was loaded). Nothing changed: an empty body.
 */
export function updateBody(stored: Workflow, settings: Settings, drafts: readonly StepDraft[]): UpdateBody {
  const before = settingsOf(stored);
  const body: UpdateBody = {};
  if (settings.name !== before.name) body.name = settings.name;
  if (settings.identifier !== before.identifier) body.identifier = settings.identifier;
  if (settings.notificationGroupId !== before.notificationGroupId)
    body.notificationGroupId = settings.notificationGroupId;
  if (settings.description !== before.description) body.description = settings.description;
  if (settings.severity !== before.severity) body.severity = settings.severity;
  if (settings.critical !== before.critical) body.critical = settings.critical;
  if (!same(settings.tags, before.tags)) body.tags = settings.tags;
  if (!same(settings.preferenceSettings, before.preferenceSettings))
    body.preferenceSettings = settings.preferenceSettings;
  if (!same(settings.data, before.data)) body.data = settings.data;
  const steps = stepsOf(drafts);
  if (!same(steps, stored.steps)) body.steps = steps;
  return body;
}

/** What creating the workflow sends. */
export function createBody(settings: Settings, drafts: readonly StepDraft[]): CreateBody {
  const { identifier: _identifier, ...rest } = settings;
  return { ...rest, steps: stepsOf(drafts) };
}

/** Tags as typed: comma-separated, trimmed, empty ones left out. */
export const parseTags = (text: string) =>
  text
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "");

/**
 * The API's message with its step paths as the page numbers steps: `steps[2].metadata.amount must…`
 * reads `Step 3: amount must…`.
 */
export function pageMessage(message: string): string {
  return message.replace(
    /\bsteps\[(\d+)\]\.?((?:metadata|template)\.)?/g,
    (_match, index: string) => `Step ${Number(index) + 1}: `,
  );
}

/** The index of the first step an API message names, if any. */
export function stepNamed(message: string): number | undefined {
  const found = /\bsteps\[(\d+)\]/.exec(message);
  return found ? Number(found[1]) : undefined;
}

const UNIT_WORDS: Record<string, [string, string]> = {
  seconds: ["sec", "sec"],
  minutes: ["min", "min"],
  hours: ["hour", "hours"],
  days: ["day", "days"],
  weeks: ["week", "weeks"],
  months: ["month", "months"],
};

/** `5 min`, `1 hour`, `3 days`. */
export function duration(amount: number | undefined, unit: string | undefined): string {
  const value = amount ?? 0;
  const words = UNIT_WORDS[unit ?? "seconds"] ?? [unit ?? "", unit ?? ""];
  return `${value} ${value === 1 ? words[0] : words[1]}`;
}

const oneLine = (text: string, max = 60) => {
  const line = text
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * What a step does, in a line: `delay 5 min`, `digest by postId for 10 min`, `throttle 3 per 10 min
 * by postId`, an email's subject.
 */
export function summary(step: StepValue): string {
  const template = step.template as JsonObject;
  const metadata = step.metadata ?? {};
  const conditions = (step.filters ?? []).reduce((n, f) => n + (f.children?.length ?? 0), 0);
  const parts: string[] = [];
  switch (step.template.type) {
    case "delay":
      parts.push(
        metadata.type === "scheduled"
          ? `delay until payload.${metadata.delayPath ?? ""}`
          : `delay ${duration(metadata.amount, metadata.unit)}`,
      );
      break;
    case "digest": {
      const key = metadata.digestKey ? ` by ${metadata.digestKey}` : "";
      parts.push(`digest${key} for ${duration(metadata.amount, metadata.unit)}`);
      if (metadata.backoff || metadata.type === "backoff")
        parts.push(`backoff ${duration(metadata.backoffAmount, metadata.backoffUnit)}`);
      break;
    }
    case "throttle": {
      const key = metadata.throttleKey ? ` by ${metadata.throttleKey}` : "";
      parts.push(`throttle ${metadata.threshold ?? 1} per ${duration(metadata.amount, metadata.unit)}${key}`);
      break;
    }
    case "email":
      parts.push(oneLine(textOf(template.subject)) || "no subject");
      break;
    case "push":
      parts.push(oneLine(textOf(template.title) || textOf(template.content)) || "no content");
      break;
    case "custom":
    case "trigger": {
      const fields = Object.keys(template).length - 1;
      parts.push(`${fields} template field${fields === 1 ? "" : "s"}`);
      break;
    }
    default:
      parts.push(oneLine(textOf(template.content)) || "no content");
  }
  if (conditions > 0) parts.push(`${conditions} condition${conditions === 1 ? "" : "s"}`);
  if (step.active === false) parts.push("off");
  return parts.join(" · ");
}

/** Sets `value` at `path` in a copy of `target` (undefined removes the key), making objects on the way. */
export function setIn(target: JsonObject, path: readonly string[], value: unknown): JsonObject {
  const [key, ...rest] = path;
  if (key === undefined) return target;
  const copy = { ...target };
  if (rest.length === 0) {
    if (value === undefined) delete copy[key];
    else copy[key] = value;
    return copy;
  }
  copy[key] = setIn(isObject(copy[key]) ? copy[key] : {}, rest, value);
  return copy;
}

export const getIn = (target: unknown, path: readonly string[]): unknown =>
  path.reduce<unknown>((at, key) => (isObject(at) ? at[key] : undefined), target);

/**
 * The payload a test send starts from: each variable the workflow's templates read, and the paths
 * its digests group by and its scheduled delays wait for, as empty text (a scheduled delay's date a
 * minute from now).
 */
export function examplePayload(workflow: Workflow, now = Date.now()): JsonObject {
  let payload: JsonObject = {};
  const add = (name: string, value: unknown) => {
    const path = name.split(".").filter((key) => key !== "");
    if (path.length > 0 && getIn(payload, path) === undefined) payload = setIn(payload, path, value);
  };
  for (const { name } of workflow.triggers[0]?.variables ?? []) add(name, "");
  for (const step of workflow.steps) {
    if (step.template.type === "digest" && step.metadata.digestKey) add(step.metadata.digestKey, "");
    if (step.template.type === "throttle" && step.metadata.throttleKey) add(step.metadata.throttleKey, "");
    if (step.metadata.type === "scheduled" && step.metadata.delayPath)
      add(step.metadata.delayPath, new Date(now + 60_000).toISOString());
  }
  return payload;
}

/**
 * Removes the key at `path` from a copy of `target`, and the objects on the way that it leaves empty
 * unless `original` has them: a field typed into and emptied again leaves no trace.
 */
export function unsetIn(target: JsonObject, path: readonly string[], original: unknown): JsonObject {
  const [key, ...rest] = path;
  if (key === undefined) return target;
  const copy = { ...target };
  if (rest.length === 0) {
    delete copy[key];
    return copy;
  }
  const inner = copy[key];
  if (!isObject(inner)) return copy;
  const before = isObject(original) ? original[key] : undefined;
  const left = unsetIn(inner, rest, before);
  if (Object.keys(left).length === 0 && before === undefined) delete copy[key];
  else copy[key] = left;
  return copy;
}

/**
 * Puts `value` at `path`; an `empty` value where the stored version had nothing removes the field
 * instead (see unsetIn), so editing back to the start is no change at all.
 */
export function putIn(
  target: JsonObject,
  path: readonly string[],
  value: unknown,
  empty: boolean,
  original: unknown,
): JsonObject {
  return empty && getIn(original, path) === undefined
    ? unsetIn(target, path, original)
    : setIn(target, path, value);
}

/** Metadata with a change, keys set to undefined left out. */
export function withMetadata(metadata: Metadata | undefined, change: Partial<Metadata>): Metadata {
  const next: JsonObject = { ...metadata, ...change };
  for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
  return next as Metadata;
}

const nonEmpty = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
const link = (url: unknown, target: unknown) => {
  const href = nonEmpty(url);
  if (href === undefined) return undefined;
  return typeof target === "string" && target !== "" ? { url: href, target } : { url: href };
};

/** An email's body as Novu's v2 API shows it: its HTML, or the editor's blocks as paragraphs and links. */
function emailBody(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content
    .map((block: unknown) => {
      const { type, content: inner, url } = isObject(block) ? block : {};
      const body = typeof inner === "string" ? inner : "";
      return type === "button"
        ? `<p><a href="${typeof url === "string" ? url : ""}">${body}</a></p>`
        : `<p>${body}</p>`;
    })
    .join("\n");
}

/**
 * A channel step's template as the control values of Novu's v2 API (src/workflows/controls.ts reads
 * a stored step the same way): what the preview route renders instead of the stored step, so the
 * preview shows the form's changes before they are saved. A value equal to the stored step's leaves
 * that part as stored.
 */
export function controlValuesOf(template: JsonObject): JsonObject {
  const values: JsonObject = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) values[key] = value;
  };
  const cta = isObject(template.cta) ? template.cta : {};
  switch (template.type) {
    case "in_app": {
      put("subject", nonEmpty(template.subject));
      put("body", nonEmpty(template.content) ?? "");
      put("avatar", nonEmpty(template.avatar));
      const action = isObject(cta.action) ? cta.action : {};
      const buttons = Array.isArray(action.buttons) ? action.buttons.filter(isObject) : [];
      for (const type of ["primary", "secondary"] as const) {
        const button = buttons.find((b) => b.type === type);
        if (!button) continue;
        const target = link(button.url, button.target);
        put(`${type}Action`, {
          label: typeof button.content === "string" ? button.content : "",
          ...(target ? { redirect: target } : {}),
        });
      }
      put("redirect", isObject(cta.data) ? link(cta.data.url, cta.data.target) : undefined);
      put("data", isObject(template.data) ? template.data : undefined);
      break;
    }
    case "email": {
      put("subject", nonEmpty(template.subject) ?? "");
      put("body", emailBody(template.content));
      put("preheader", nonEmpty(template.preheader));
      const name = nonEmpty(template.senderName);
      put("from", name === undefined ? undefined : { name });
      break;
    }
    case "push":
      put("subject", nonEmpty(template.title));
      put("body", nonEmpty(template.content) ?? "");
      break;
    default:
      put("body", nonEmpty(template.content) ?? "");
  }
  return values;
}
