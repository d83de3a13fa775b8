import { badRequest, type FieldError } from "../errors.ts";
import { newObjectId, newUuid } from "../ids.ts";
import type { Filter, Step, TimeUnit } from "./domain.ts";
import type { StepInputValue } from "./schemas.ts";
import { stepTemplateErrors } from "./templates.ts";

type FilterInput = NonNullable<StepInputValue["filters"]>[number];

function normalizeFilter(filter: FilterInput): Filter {
  return {
    isNegated: filter.isNegated ?? false,
    type: filter.type ?? "BOOLEAN",
    value: filter.value ?? "AND",
    children: (filter.children ?? []).map((child) => ({
      field: child.field ?? "",
      value: child.value ?? "",
      operator: child.operator ?? "EQUAL",
      on: child.on ?? "subscriber",
    })),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A template that does not compile, or a delay or digest that could not run, is the author's 400
 * when saving, not a failed delivery later (every field at fault in the one error body). Called
 * before any transaction opens: parsing a large workflow takes a while, and on SQLite an open
 * transaction holds the only connection.
 */
export function requireValidSteps(inputs: readonly StepDraft[]): void {
  const errors = [...stepIdErrors(inputs), ...stepTemplateErrors(inputs), ...stepTimerErrors(inputs)];
  const first = errors[0];
  if (first) throw badRequest(`${first.field} ${first.message}`, errors);
}

// The longest delay or window a step may ask for (a month counted as 31 days): past it, a timer's
// date would soon leave what a Date can hold, and no notification is worth that wait.
const MAX_WAIT_MS = 100 * 365.25 * 86_400_000;
const UNIT_MS: Record<TimeUnit, number> = {
  seconds: 1_000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000,
  months: 31 * 86_400_000,
};

/**
 * What makes a delay, digest or throttle step impossible to run, per field (docs/engine.md, "Delays and digests"): a
 * wait that is not a positive whole number of a known unit, a scheduled delay without `delayPath`, a backoff
 * without a positive `backoffAmount`, a metadata type the step does not have. Unknown units are the schema's
 * 400 already; missing ones mean seconds, as stored.
 */
export function stepTimerErrors(inputs: readonly StepInputValue[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const [i, input] of inputs.entries()) {
    const type = input.template.type;
    if (type !== "delay" && type !== "digest" && type !== "throttle") continue;
    const metadata = input.metadata ?? {};
    const at = `steps[${i}].metadata`;
    const kind = metadata.type ?? "regular";
    const wait = (
      amountField: "amount" | "backoffAmount",
      unitField: "unit" | "backoffUnit",
      when: string,
    ) => {
      const amount = metadata[amountField];
      if (amount === undefined || !Number.isInteger(amount) || amount <= 0) {
        errors.push({ field: `${at}.${amountField}`, message: `must be a positive whole number ${when}` });
        return;
      }
      if (amount * UNIT_MS[metadata[unitField] ?? "seconds"] > MAX_WAIT_MS) {
        errors.push({ field: `${at}.${amountField}`, message: "must make a wait of at most 100 years" });
      }
    };
    if (type === "throttle") {
      // A window of amount × unit; the threshold defaults to 1 (the schema refuses one below it).
      wait("amount", "unit", "for a throttle step (its window)");
      continue;
    }
    if (type === "delay") {
      if (kind === "scheduled") {
        if (!metadata.delayPath?.trim()) {
          errors.push({
            field: `${at}.delayPath`,
            message: "must name the payload field holding the date to wait for (type: scheduled)",
          });
        }
      } else if (kind === "regular") {
        wait("amount", "unit", "for a delay step");
      } else {
        errors.push({ field: `${at}.type`, message: "must be regular or scheduled for a delay step" });
      }
      continue;
    }
    if (kind !== "regular" && kind !== "backoff") {
      errors.push({ field: `${at}.type`, message: "must be regular or backoff for a digest step" });
      continue;
    }
    wait("amount", "unit", "for a digest step");
    if (metadata.backoff === true || kind === "backoff") {
      wait("backoffAmount", "backoffUnit", "when backoff is on");
    }
  }
  return errors;
}

/** A step as the services build it: a v1 step of a request, with the v2 step id when one was given. */
export type StepDraft = StepInputValue & { stepId?: string | undefined };

/** What a step id may be (Novu's v2 step ids are slugs): letters, digits, hyphens and underscores. */
export const STEP_ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

/** Two steps of a workflow sent with the same v2 step id: 400 naming the second. */
export function stepIdErrors(inputs: readonly StepDraft[], field = (i: number) => `steps[${i}].stepId`) {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const [i, input] of inputs.entries()) {
    if (input.stepId === undefined) continue;
    if (!STEP_ID_PATTERN.test(input.stepId)) {
      errors.push({ field: field(i), message: "must be 1–100 letters, digits, hyphens or underscores" });
    } else if (seen.has(input.stepId)) {
      errors.push({ field: field(i), message: `is the id of an earlier step (${input.stepId})` });
    }
    seen.add(input.stepId);
  }
  return errors;
}

/** A name as a step id: accents folded, lower case, runs of anything but letters, digits and `_` as one `-`. */
function stepSlug(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80);
}

/**
 * Each step's v2 id: the one it has (stored or sent), else its name slugified (its type when the
 * name has no letters or digits), with `-2`, `-3`... when an earlier step holds that slug. Steps stored before
 * step ids existed get theirs so on every reading, the same each time.
 */
export function assignStepIds<
  T extends { name: string; stepId?: string | undefined; template: { type: string } },
>(steps: readonly T[]): string[] {
  const taken = new Set(steps.flatMap((step) => (step.stepId === undefined ? [] : [step.stepId])));
  return steps.map((step) => {
    if (step.stepId !== undefined) return step.stepId;
    const base = stepSlug(step.name) || step.template.type;
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}-${n}`;
    taken.add(candidate);
    return candidate;
  });
}

/**
 * Turns the steps of a request into stored steps with every field the seed lists. A step that
 * names the `_id` of one of the workflow's current steps keeps its ids (its v2 step id too); any
 * other gets new ones.
 */
export function normalizeSteps(inputs: readonly StepDraft[], current: readonly Step[] = []): Step[] {
  const known = new Map(current.map((step) => [step._id, step]));
  const previousOf = inputs.map((input) => (input._id ? known.get(input._id) : undefined));
  const stepIds = assignStepIds(
    inputs.map((input, i) => ({
      name: input.name ?? previousOf[i]?.name ?? input.template.type,
      stepId: input.stepId ?? previousOf[i]?.stepId,
      template: input.template,
    })),
  );
  return inputs.map((input, i) => {
    const previous = previousOf[i];
    const metadata = input.metadata ?? {};
    return {
      _id: previous?._id ?? newObjectId(),
      stepId: stepIds[i] as string,
      uuid: input.uuid ?? previous?.uuid ?? newUuid(),
      name: input.name ?? previous?.name ?? input.template.type,
      _templateId: previous?._templateId ?? input._templateId ?? newObjectId(),
      active: input.active ?? true,
      shouldStopOnFail: input.shouldStopOnFail ?? false,
      template: { ...input.template },
      filters: (input.filters ?? []).map(normalizeFilter),
      _parentId: isPlainObject(input._parentId) ? input._parentId : {},
      metadata: {
        amount: metadata.amount ?? 0,
        unit: metadata.unit ?? "seconds",
        digestKey: metadata.digestKey ?? "",
        type: metadata.type ?? "regular",
        backoff: metadata.backoff ?? false,
        backoffAmount: metadata.backoffAmount ?? 0,
        backoffUnit: metadata.backoffUnit ?? "seconds",
        updateMode: metadata.updateMode ?? false,
        ...(metadata.delayPath !== undefined ? { delayPath: metadata.delayPath } : {}),
        ...(metadata.threshold !== undefined ? { threshold: metadata.threshold } : {}),
        ...(metadata.throttleKey !== undefined ? { throttleKey: metadata.throttleKey } : {}),
      },
      replyCallback: input.replyCallback ?? {},
    };
  });
}

/** Each step with its v2 step id (stored, or derived for steps stored before step ids existed). */
export function stepsWithIds(workflow: { steps: readonly Step[] }): (Step & { stepId: string })[] {
  const ids = assignStepIds(workflow.steps);
  return workflow.steps.map((step, i) => ({ ...step, stepId: ids[i] as string }));
}
