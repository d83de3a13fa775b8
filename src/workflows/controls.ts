import { isDeepStrictEqual } from "node:util";
import type { FieldError } from "../errors.ts";
import {
  type Step,
  type StepMetadata,
  type StepTemplate,
  type StepType,
  TIME_UNITS,
  type TimeUnit,
} from "./domain.ts";
import type { V2_STEP_TYPES } from "./enums.ts";
import type { StepDraft } from "./steps.ts";

/**
 * How Novu's v2 API sees a step (`type` and `controlValues`) and how Tidings stores it (the v1 step:
 * a `template` and its `metadata`): one step, two views. Each control value is a lens onto the stored
 * step: it reads its value from the step and writes it back. A v2 write of a step the workflow
 * already has starts from the stored step and changes only the control values that differ from what
 * reading it shows, so what v2 cannot express (filters, an email's editor blocks, a button's target,
 * fields of the template v2 does not name) survives a read, change and write through v2.
 */

export { V2_STEP_TYPES } from "./enums.ts";
export type V2StepType = (typeof V2_STEP_TYPES)[number];

export const v2TypeOf = (type: StepType): V2StepType => (type === "trigger" ? "custom" : type);

/** The parts of a step that control values read and write. */
interface StepParts {
  template: Record<string, unknown>;
  metadata: Partial<StepMetadata>;
}

interface Lens {
  /**
   * Left out of a write, the stored value stays (instead of being removed): for control values
   * Novu's SDK does not know, which it drops from what it sends back.
   */
  keptWhenAbsent?: boolean;
  read(parts: StepParts): unknown;
  /** Writes the value (undefined: the control value was left out); a string is the problem with it. */
  write(parts: StepParts, value: unknown): string | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const nonEmpty = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** A template field holding text: shown when it is a non-empty string, written as a string or removed. */
const text = (field: string, options: { always?: boolean } = {}): Lens => ({
  read: ({ template }) => nonEmpty(template[field]) ?? (options.always ? "" : undefined),
  write({ template }, value) {
    if (value === undefined || value === null || value === "") delete template[field];
    else if (typeof value === "string") template[field] = value;
    else return "must be a string";
    return undefined;
  },
});

/** Novu's link: `{url, target?}`. */
function link(url: unknown, target: unknown): { url: string; target?: string } | undefined {
  const href = nonEmpty(url);
  if (href === undefined) return undefined;
  return typeof target === "string" && target !== "" ? { url: href, target } : { url: href };
}

function readLink(value: unknown): { url?: string; target?: string } | string {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) return "must be an object with a url";
  const { url, target } = value;
  if (url !== undefined && typeof url !== "string") return "url must be a string";
  if (target !== undefined && typeof target !== "string") return "target must be a string";
  return { ...(url !== undefined ? { url } : {}), ...(target !== undefined ? { target } : {}) };
}

const ctaOf = (template: Record<string, unknown>) => (isObject(template.cta) ? template.cta : {});

/** An in-app step's redirect: `cta.data` (`url`, `target`) of the stored template. */
const redirect: Lens = {
  read: ({ template }) => {
    const data = ctaOf(template).data;
    return isObject(data) ? link(data.url, data.target) : undefined;
  },
  write({ template }, value) {
    const parsed = readLink(value);
    if (typeof parsed === "string") return parsed;
    const cta = ctaOf(template);
    template.cta = { ...cta, type: typeof cta.type === "string" ? cta.type : "redirect", data: parsed };
    return undefined;
  },
};

/** An in-app step's primary or secondary action: its button in `cta.action.buttons`. */
const action = (type: "primary" | "secondary"): Lens => ({
  read: ({ template }) => {
    const buttons = ctaOf(template).action;
    const list = isObject(buttons) && Array.isArray(buttons.buttons) ? buttons.buttons : [];
    const button = list.find((b: unknown) => isObject(b) && b.type === type) as
      | Record<string, unknown>
      | undefined;
    if (!button) return undefined;
    const target = link(button.url, button.target);
    return {
      label: typeof button.content === "string" ? button.content : "",
      ...(target ? { redirect: target } : {}),
    };
  },
  write({ template }, value) {
    const cta = ctaOf(template);
    const actions = isObject(cta.action) ? cta.action : {};
    const others = (Array.isArray(actions.buttons) ? actions.buttons : []).filter(
      (b: unknown) => !(isObject(b) && b.type === type),
    );
    let button: Record<string, unknown> | undefined;
    if (value !== undefined && value !== null) {
      if (!isObject(value)) return "must be an object with a label";
      if (value.label !== undefined && typeof value.label !== "string") return "label must be a string";
      const target = readLink(value.redirect);
      if (typeof target === "string") return `redirect ${target}`;
      button = {
        type,
        content: value.label ?? "",
        ...(target.url !== undefined ? { url: target.url } : {}),
        ...(target.target !== undefined ? { target: target.target } : {}),
      };
    }
    // The primary button first, as the inbox shows them.
    const buttons = button ? (type === "primary" ? [button, ...others] : [...others, button]) : others;
    template.cta = {
      ...cta,
      type: typeof cta.type === "string" ? cta.type : "redirect",
      data: isObject(cta.data) ? cta.data : {},
      ...(buttons.length > 0 ? { action: { ...actions, buttons } } : {}),
    };
    if (buttons.length === 0) delete (template.cta as Record<string, unknown>).action;
    return undefined;
  },
});

/** A free object of the template (an in-app step's `data`). */
const object = (field: string): Lens => ({
  read: ({ template }) => (isObject(template[field]) ? template[field] : undefined),
  write({ template }, value) {
    if (value === undefined || value === null) delete template[field];
    else if (isObject(value)) template[field] = value;
    else return "must be an object";
    return undefined;
  },
});

/** An email's body: its HTML, or the editor's blocks shown as the paragraphs and links they send. */
const emailBody: Lens = {
  read: ({ template }) => {
    const content = template.content;
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
  },
  write: text("content").write,
};

/** The email's sender: Novu's `from` (its `name` is the step's sender name; the address is the integration's). */
const emailFrom: Lens = {
  read: ({ template }) => {
    const name = nonEmpty(template.senderName);
    return name === undefined ? undefined : { name };
  },
  write({ template }, value) {
    if (value === undefined || value === null) {
      delete template.senderName;
      return undefined;
    }
    if (!isObject(value)) return "must be an object";
    if (value.email !== undefined && value.email !== "")
      return "email is not supported: an email step sends from its integration's address";
    return text("senderName").write({ template, metadata: {} }, value.name);
  },
};

const unsupported = (what: string): Lens => ({
  read: () => undefined,
  write: (_parts, value) => (value === undefined || value === null ? undefined : `is not supported: ${what}`),
});

/** Control values Novu's SDK sends with their defaults, which change nothing here. */
const ignoredWhen = (...harmless: unknown[]): Lens => ({
  read: () => undefined,
  write: (_parts, value) =>
    value === undefined || harmless.some((h) => isDeepStrictEqual(h, value))
      ? undefined
      : `is not supported (only ${harmless.map((h) => JSON.stringify(h)).join(" or ")})`,
});

/** A delay's or digest's amount; a scheduled delay given one becomes a regular delay. */
const metadataAmount: Lens = {
  read: ({ metadata }) => (metadata.type === "scheduled" ? undefined : metadata.amount),
  write({ metadata }, value) {
    if (value === undefined || value === null) delete metadata.amount;
    else if (typeof value === "number") {
      metadata.amount = value;
      if (metadata.type === "scheduled") {
        metadata.type = "regular";
        delete metadata.delayPath;
      }
    } else return "must be a number";
    return undefined;
  },
};

const isUnit = (value: unknown): value is TimeUnit => (TIME_UNITS as readonly unknown[]).includes(value);
const UNITS = `must be one of ${TIME_UNITS.join(", ")}`;

const metadataUnit: Lens = {
  read: ({ metadata }) => (metadata.type === "scheduled" ? undefined : metadata.unit),
  write({ metadata }, value) {
    if (value === undefined || value === null) delete metadata.unit;
    else if (isUnit(value)) metadata.unit = value;
    else return UNITS;
    return undefined;
  },
};

const regularOnly = (kind: string): Lens => ({
  read: ({ metadata }) => (metadata.type === "scheduled" ? undefined : "regular"),
  write: (_parts, value) =>
    value === undefined || value === "regular"
      ? undefined
      : `must be regular: a ${kind} by cron is not supported`,
});

/**
 * A scheduled delay: until the date at this payload path (`metadata.delayPath`, type `scheduled`).
 * Novu's SDK has no such control value: it keeps it apart and does not send it back, so a write
 * that leaves it out keeps the schedule (an `amount` makes the delay regular again; `""` clears it).
 */
const delayDynamicKey: Lens = {
  keptWhenAbsent: true,
  read: ({ metadata }) => (metadata.type === "scheduled" ? (metadata.delayPath ?? "") : undefined),
  write({ metadata }, value) {
    if (value === null || value === "") {
      if (metadata.type === "scheduled") metadata.type = "regular";
      delete metadata.delayPath;
      return undefined;
    }
    if (typeof value !== "string") return "must be a string";
    metadata.type = "scheduled";
    metadata.delayPath = value;
    return undefined;
  },
};

const digestKey: Lens = {
  read: ({ metadata }) => nonEmpty(metadata.digestKey),
  write({ metadata }, value) {
    if (value === undefined || value === null) metadata.digestKey = "";
    else if (typeof value === "string") metadata.digestKey = value;
    else return "must be a string";
    return undefined;
  },
};

/** Novu's look-back window is the digest's backoff: a digest only when events came within it. */
const lookBackWindow: Lens = {
  read: ({ metadata }) =>
    metadata.backoff === true || metadata.type === "backoff"
      ? { amount: metadata.backoffAmount ?? 0, unit: metadata.backoffUnit ?? "seconds" }
      : undefined,
  write({ metadata }, value) {
    if (value === undefined || value === null) {
      metadata.type = "regular";
      metadata.backoff = false;
      metadata.backoffAmount = 0;
      metadata.backoffUnit = "seconds";
      return undefined;
    }
    if (!isObject(value)) return "must be an object with an amount and a unit";
    if (typeof value.amount !== "number") return "amount must be a number";
    if (!isUnit(value.unit)) return `unit ${UNITS}`;
    metadata.type = "backoff";
    metadata.backoff = true;
    metadata.backoffAmount = value.amount;
    metadata.backoffUnit = value.unit;
    return undefined;
  },
};

const SKIP = unsupported("conditions are a v1 step's filters (PUT /v1/workflows/:id)");

/** A throttle's threshold: how many runs its window lets through. */
const threshold: Lens = {
  read: ({ metadata }) => metadata.threshold ?? 1,
  write({ metadata }, value) {
    if (value === undefined || value === null) delete metadata.threshold;
    else if (typeof value === "number" && Number.isInteger(value) && value >= 1) metadata.threshold = value;
    else return "must be a whole number of at least 1";
    return undefined;
  },
};

/** A throttle's key: the payload path whose value gets a window of its own. */
const throttleKey: Lens = {
  read: ({ metadata }) => nonEmpty(metadata.throttleKey),
  write({ metadata }, value) {
    if (value === undefined || value === null || value === "") delete metadata.throttleKey;
    else if (typeof value === "string") metadata.throttleKey = value;
    else return "must be a string";
    return undefined;
  },
};

const throttleType: Lens = {
  read: () => "fixed",
  write: (_parts, value) =>
    value === undefined || value === "fixed" ? undefined : "must be fixed: a dynamic window is not supported",
};

/**
 * A custom step's (and a v1 trigger step's) template fields but its type, under `custom`: Novu's
 * SDK sends a custom step's control values under that one key.
 */
const custom: Lens = {
  read: ({ template }) => {
    const { type: _type, ...rest } = template;
    return rest;
  },
  write({ template }, value) {
    if (value !== undefined && value !== null && !isObject(value)) return "must be an object";
    for (const key of Object.keys(template)) if (key !== "type") delete template[key];
    if (isObject(value)) {
      if (Object.hasOwn(value, "type")) return "must not hold a type";
      // Own properties whatever their names (a body's "__proto__" included), as v1 stores a template.
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(template, key, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return undefined;
  },
};

const LENSES: Record<V2StepType, Record<string, Lens>> = {
  custom: { custom },
  in_app: {
    subject: text("subject"),
    body: text("content", { always: true }),
    avatar: text("avatar"),
    primaryAction: action("primary"),
    secondaryAction: action("secondary"),
    redirect,
    data: object("data"),
    skip: SKIP,
    disableOutputSanitization: ignoredWhen(false),
  },
  email: {
    subject: text("subject", { always: true }),
    body: emailBody,
    preheader: text("preheader"),
    from: emailFrom,
    skip: SKIP,
    editorType: ignoredWhen("html", "block"),
    disableOutputSanitization: ignoredWhen(false),
    layoutId: ignoredWhen(null),
    useProviderDefaults: ignoredWhen(true, false),
    replyTo: unsupported("a reply-to address"),
  },
  sms: { body: text("content", { always: true }), skip: SKIP },
  chat: { body: text("content", { always: true }), skip: SKIP, editorType: ignoredWhen("text") },
  push: { subject: text("title"), body: text("content", { always: true }), skip: SKIP },
  delay: {
    type: regularOnly("delay"),
    amount: metadataAmount,
    unit: metadataUnit,
    dynamicKey: delayDynamicKey,
    cron: unsupported("a delay by cron"),
    skip: SKIP,
  },
  digest: {
    type: regularOnly("digest"),
    amount: metadataAmount,
    unit: metadataUnit,
    digestKey,
    lookBackWindow,
    cron: unsupported("a digest by cron"),
    skip: SKIP,
  },
  throttle: {
    type: throttleType,
    amount: metadataAmount,
    unit: metadataUnit,
    threshold,
    throttleKey,
    skip: SKIP,
  },
};

/** The step's control values, as Novu's v2 API shows them. */
export function controlValuesOf(step: Pick<Step, "template" | "metadata">): Record<string, unknown> {
  const type = v2TypeOf(step.template.type);
  const parts: StepParts = { template: step.template, metadata: step.metadata };
  const values: Record<string, unknown> = {};
  for (const [key, lens] of Object.entries(LENSES[type])) {
    const value = lens.read(parts);
    if (value !== undefined) values[key] = value;
  }
  return values;
}

/** A step of a v2 request: Novu's upsert (`_id` is the SDK's `id` on the wire). */
export interface V2StepInput {
  _id?: string | undefined;
  stepId?: string | undefined;
  name: string;
  type: V2StepType;
  controlValues?: Record<string, unknown> | undefined;
}

/**
 * The v1 step a v2 step stands for, merged into the step it replaces (`previous`, of the same type):
 * the control values sent are written through their lenses, those equal to what the stored step
 * shows are left as stored, and what v2 has no control value for is kept. Without control values
 * the previous step's content stays. The problems are named under `at`.
 */
export function stepDraftOf(
  input: V2StepInput,
  previous: Step | undefined,
  at: string,
): { draft: StepDraft; errors: FieldError[] } {
  const same = previous && v2TypeOf(previous.template.type) === input.type ? previous : undefined;
  const template: StepTemplate = same ? structuredClone(same.template) : { type: input.type };
  const metadata: Partial<StepMetadata> = same ? structuredClone(same.metadata) : {};
  const errors: FieldError[] = [];
  const controls = input.controlValues;
  if (controls !== undefined) {
    const lenses = LENSES[input.type];
    for (const key of Object.keys(controls)) {
      if (!(key in lenses))
        errors.push({
          field: `${at}.controlValues.${key}`,
          message: "is not a control value of this step type",
        });
    }
    const parts: StepParts = { template, metadata };
    const shown = same ? { template: same.template, metadata: same.metadata } : undefined;
    for (const [key, lens] of Object.entries(lenses)) {
      const value = controls[key];
      if (value === undefined && lens.keptWhenAbsent) continue;
      if (shown && isDeepStrictEqual(value, lens.read(shown))) continue;
      const problem = lens.write(parts, value);
      if (problem) errors.push({ field: `${at}.controlValues.${key}`, message: problem });
    }
  }
  const draft: StepDraft = {
    ...(same ? { _id: same._id, uuid: same.uuid, _templateId: same._templateId } : {}),
    stepId: input.stepId ?? same?.stepId,
    name: input.name,
    active: same?.active ?? true,
    shouldStopOnFail: same?.shouldStopOnFail ?? false,
    template: template as StepDraft["template"],
    filters: (same?.filters ?? []) as StepDraft["filters"],
    _parentId: same?._parentId ?? {},
    metadata: metadata as StepDraft["metadata"],
    replyCallback: same?.replyCallback ?? {},
  };
  return { draft, errors };
}
