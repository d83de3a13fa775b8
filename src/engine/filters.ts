import type {
  Filter,
  FilterChild,
  FilterOn,
  FilterOperator,
  FilterValue,
  TimeUnit,
} from "../workflows/domain.ts";
import { DEFAULT_RENDER_LIMITS, INLINE_SLICE_MS, rendersInline, renderTemplate } from "./render.ts";
import { addUnits } from "./time-units.ts";

/**
 * Step conditions (docs/engine.md, "Running a notification"), as a function of the step's filters, what the
 * notification knows and the clock. Where the contract is silent this follows Novu's conditions filter,
 * except where Novu would throw or cannot be right; each such choice is stated where it is made. Where we
 * knowingly differ from Novu (its v1 worker):
 * - Novu evaluates only EQUAL, NOT_EQUAL, the four orderings, IN, NOT_IN and IS_DEFINED; ALL_IN,
 *   ANY_IN, BETWEEN, NOT_BETWEEN, LIKE and NOT_LIKE never hold there. Here LIKE is a case-sensitive
 *   substring (JavaScript's `includes`, what Novu's IN uses on text) and BETWEEN is inclusive.
 * - Novu's IN asks whether the field contains the value (`field.includes(value)`: a substring of
 *   text, an item of a list) and throws on a missing field; here the field is one of the
 *   comma-separated values (for a list field: they share an item), as the contract says.
 * - Novu ignores `isNegated`, counts null as defined, and coerces by `typeof` only, so dates compare
 *   as text and "10" is not larger than "9".
 */

/** A message of an earlier step of the same notification, as a `previousStep` condition sees it. */
export interface PreviousStepMessage {
  seen: boolean;
  read: boolean;
}

export interface FilterContext {
  payload?: Record<string, unknown> | undefined;
  /** The subscriber record: its fields, `data`, and `isOnline` / `lastOnlineAt` for the online conditions. */
  subscriber?: Record<string, unknown> | undefined;
  tenant?: Record<string, unknown> | undefined;
  actor?: Record<string, unknown> | undefined;
  /** The digest, when one ran: readable by a condition's value template (`{{step.total_count}}`). */
  step?: Record<string, unknown> | undefined;
  /** A webhook's JSON response, when the caller fetched one: `on: "webhook"` conditions read it. */
  webhook?: Record<string, unknown> | undefined;
  /** Earlier steps' messages by step uuid: `on: "previousStep"` conditions read them. */
  previousSteps?: Readonly<Record<string, PreviousStepMessage>> | undefined;
  /** The clock's now (epoch ms), for `isOnlineInLast`. */
  now: number;
}

export interface ConditionOutcome {
  on: FilterOn;
  field: string;
  operator: FilterOperator;
  /** The value compared with, after its template (if any) was rendered. */
  expected: string;
  /** What the field held, for people: `(missing)` when absent or null. */
  actual: string;
  passed: boolean;
  /** Why a condition could not be judged as written (an unusable value, a missing response). */
  note?: string;
}

export interface FilterOutcome {
  passed: boolean;
  negated: boolean;
  combinator: FilterValue;
  conditions: ConditionOutcome[];
}

export interface FilterResult {
  passed: boolean;
  filters: FilterOutcome[];
}

/** The detail of the execution of a step its filters skipped (docs/engine.md, "Running a notification"). */
export const FILTERED_DETAIL = "filtered";

// ------------------------------------------------------------------ reading fields

/**
 * The value at a dot path (`user.plan`, `items.0.name`, `items[0].name`), or undefined. Only own
 * properties are followed, so `constructor` or `__proto__` read nothing a payload did not send.
 */
export function readPath(source: unknown, path: string): unknown {
  if (path === "") return undefined;
  let value = source;
  for (const segment of path.replace(/\[([^\]]*)\]/g, ".$1").split(".")) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

// ------------------------------------------------------------------ coercion

// Dates as JSON carries them: ISO 8601 day, optionally with a time and a zone.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const HAS_ZONE = /(?:Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO date's instant. A time without a zone is UTC, so the answer never depends on the server's zone. */
function isoInstant(text: string): number | undefined {
  const trimmed = text.trim();
  if (!ISO_DATE.test(trimmed)) return undefined;
  const withZone = trimmed.length > 10 && !HAS_ZONE.test(trimmed) ? `${trimmed}Z` : trimmed;
  const ms = Date.parse(withZone.replace(" ", "T"));
  return Number.isNaN(ms) ? undefined : ms;
}

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

function numberOf(text: string): number | undefined {
  const trimmed = text.trim();
  return NUMERIC.test(trimmed) ? Number(trimmed) : undefined;
}

function booleanOf(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  return word === "true" ? true : word === "false" ? false : undefined;
}

type Scalar =
  | { kind: "number"; value: number }
  | { kind: "boolean"; value: boolean }
  | { kind: "date"; value: number }
  | { kind: "string"; value: string };

/** A field's value as a comparable scalar; undefined for what is missing, a list or an object. */
function scalarOf(actual: unknown): Scalar | undefined {
  if (typeof actual === "number") return { kind: "number", value: actual };
  if (typeof actual === "bigint") return { kind: "number", value: Number(actual) };
  if (typeof actual === "boolean") return { kind: "boolean", value: actual };
  if (actual instanceof Date) return { kind: "date", value: actual.getTime() };
  if (typeof actual === "string") {
    const instant = isoInstant(actual);
    return instant === undefined ? { kind: "string", value: actual } : { kind: "date", value: instant };
  }
  return undefined;
}

/**
 * The condition's text read as the type of the field it is compared with. Undefined when it cannot
 * be (`"abc"` against a number): such a condition does not hold. A date field compared with text
 * that is no date falls back to comparing the two as text.
 */
function expectedAs(field: Scalar, raw: string, original: unknown): [Scalar, Scalar] | undefined {
  switch (field.kind) {
    case "number": {
      const value = numberOf(raw);
      return value === undefined ? undefined : [field, { kind: "number", value }];
    }
    case "boolean": {
      const value = booleanOf(raw);
      return value === undefined ? undefined : [field, { kind: "boolean", value }];
    }
    case "date": {
      const value = isoInstant(raw);
      if (value !== undefined) return [field, { kind: "date", value }];
      const text = original instanceof Date ? original.toISOString() : String(original);
      return [
        { kind: "string", value: text },
        { kind: "string", value: raw },
      ];
    }
    case "string":
      return [field, { kind: "string", value: raw }];
  }
}

function equal(actual: unknown, raw: string): boolean {
  const field = scalarOf(actual);
  const pair = field && expectedAs(field, raw, actual);
  return pair !== undefined && pair[0].value === pair[1].value;
}

/**
 * -1, 0 or 1; undefined when the two have no order (booleans, or a value that cannot be read as
 * the field's type). Text that is a number on both sides is ordered as numbers ("10" after "9").
 */
function order(actual: unknown, raw: string): number | undefined {
  const field = scalarOf(actual);
  const pair = field && expectedAs(field, raw, actual);
  if (!pair) return undefined;
  let [a, b] = [pair[0].value, pair[1].value];
  if (pair[0].kind === "boolean") return undefined;
  if (pair[0].kind === "string") {
    const [x, y] = [numberOf(a as string), numberOf(b as string)];
    if (x !== undefined && y !== undefined) [a, b] = [x, y];
  }
  // NaN has no place in an order (it would otherwise read as "equal").
  if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `IN` and the list operators take a comma-separated list; items are trimmed, empty ones dropped. */
const listOf = (raw: string) =>
  raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

const isMissing = (value: unknown) => value === undefined || value === null;

// ------------------------------------------------------------------ operators

type Verdict = { passed: boolean; note?: string };

function contains(actual: unknown, raw: string): boolean {
  if (Array.isArray(actual)) return actual.some((item) => contains(item, raw));
  const field = scalarOf(actual);
  if (!field) return false;
  const text = actual instanceof Date ? actual.toISOString() : String(actual);
  return text.includes(raw);
}

function between(actual: unknown, raw: string): Verdict {
  const bounds = listOf(raw);
  const [low, high] = bounds;
  if (bounds.length !== 2 || low === undefined || high === undefined) {
    return { passed: false, note: 'BETWEEN takes two values: "low,high"' };
  }
  const fromLow = order(actual, low);
  const toHigh = order(actual, high);
  return { passed: fromLow !== undefined && toHigh !== undefined && fromLow >= 0 && toHigh <= 0 };
}

function positive(operator: FilterOperator, actual: unknown, raw: string): Verdict {
  if (isMissing(actual)) return { passed: false };
  switch (operator) {
    case "EQUAL":
    case "NOT_EQUAL":
      if (typeof actual === "object" && !(actual instanceof Date)) {
        return { passed: false, note: "a list or an object equals no text: use IN, ANY_IN or ALL_IN" };
      }
      return { passed: equal(actual, raw) };
    case "LARGER":
      return { passed: (order(actual, raw) ?? 0) > 0 };
    case "SMALLER":
      return { passed: (order(actual, raw) ?? 0) < 0 };
    case "LARGER_EQUAL": {
      const o = order(actual, raw);
      return { passed: o !== undefined && o >= 0 };
    }
    case "SMALLER_EQUAL": {
      const o = order(actual, raw);
      return { passed: o !== undefined && o <= 0 };
    }
    case "IN":
    case "NOT_IN":
    case "ANY_IN": {
      const items = listOf(raw);
      const values = Array.isArray(actual) ? actual : [actual];
      return { passed: values.some((value) => items.some((item) => equal(value, item))) };
    }
    case "ALL_IN": {
      const items = listOf(raw);
      const values = Array.isArray(actual) ? actual : [actual];
      return {
        passed: values.length > 0 && values.every((value) => items.some((item) => equal(value, item))),
      };
    }
    case "BETWEEN":
    case "NOT_BETWEEN":
      return between(actual, raw);
    case "LIKE":
    case "NOT_LIKE":
      return { passed: contains(actual, raw) };
    case "IS_DEFINED":
      return { passed: true };
  }
}

const NEGATIONS: Partial<Record<FilterOperator, true>> = {
  NOT_EQUAL: true,
  NOT_IN: true,
  NOT_BETWEEN: true,
  NOT_LIKE: true,
};

/**
 * Whether `actual` satisfies `operator` with the condition's text. Every NOT_ operator is the exact
 * complement of its positive one, a missing field included: a subscriber without a plan is NOT_EQUAL
 * "pro" and NOT_IN "pro,team" (Novu throws on NOT_IN of a missing field).
 */
export function compare(operator: FilterOperator, actual: unknown, raw: string): Verdict {
  const verdict = positive(operator, actual, raw);
  return NEGATIONS[operator] ? { ...verdict, passed: !verdict.passed } : verdict;
}

// ------------------------------------------------------------------ conditions

function display(value: unknown): string {
  if (isMissing(value)) return "(missing)";
  const text = typeof value === "object" && !(value instanceof Date) ? JSON.stringify(value) : String(value);
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

// Typed as a record so a unit added to TimeUnit cannot be forgotten here.
const UNITS: Record<TimeUnit, true> = {
  seconds: true,
  minutes: true,
  hours: true,
  days: true,
  weeks: true,
  months: true,
};
const UNIT_WORDS = new Map<string, TimeUnit>(
  (Object.keys(UNITS) as TimeUnit[]).flatMap((unit) => [
    [unit, unit],
    [unit.slice(0, -1), unit],
  ]),
);

/**
 * `isOnlineInLast`'s window. Novu stores it as `value` (a number) and `timeOperator` (minutes, hours
 * or days); our filter keeps only `value`, so the unit may be written in it ("5 minutes"), or come
 * from a `timeOperator` a client sent; without either it is days, as Novu falls back to.
 */
function onlineWindow(child: FilterChild, raw: string): { amount: number; unit: TimeUnit } | undefined {
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw);
  if (!match) return undefined;
  const written = (match[2] ?? "").toLowerCase();
  const sent = (child as FilterChild & { timeOperator?: unknown }).timeOperator;
  const unitWord = written || (typeof sent === "string" ? sent.toLowerCase() : "days");
  const unit = UNIT_WORDS.get(unitWord);
  return unit === undefined ? undefined : { amount: Number(match[1]), unit };
}

function onlineCondition(
  child: FilterChild,
  raw: string,
  context: FilterContext,
): Verdict & { actual: unknown } {
  const subscriber = context.subscriber ?? {};
  const isOnline = readPath(subscriber, "isOnline");
  const lastOnlineAt = readPath(subscriber, "lastOnlineAt");
  // Novu: a subscriber created before online status existed is neither online nor offline.
  if (isMissing(isOnline) && isMissing(lastOnlineAt)) {
    return { passed: false, actual: undefined, note: "the subscriber has no online status" };
  }
  if (child.on === "isOnline") {
    const expected = raw.trim() === "" ? true : booleanOf(raw);
    if (expected === undefined) return { passed: false, actual: isOnline, note: 'expects "true" or "false"' };
    const matches = (isOnline === true) === expected;
    return { passed: child.operator === "NOT_EQUAL" ? !matches : matches, actual: isOnline === true };
  }
  if (isOnline === true) return { passed: true, actual: "online now" };
  const window = onlineWindow(child, raw);
  if (!window)
    return { passed: false, actual: lastOnlineAt, note: 'expects an amount and a unit: "5 minutes"' };
  const last = typeof lastOnlineAt === "string" ? isoInstant(lastOnlineAt) : undefined;
  if (last === undefined) return { passed: false, actual: lastOnlineAt };
  // A moment in the future (clocks of two machines) counts as just now.
  return { passed: last >= addUnits(context.now, -window.amount, window.unit), actual: lastOnlineAt };
}

const PREVIOUS_STEP_STATES = ["read", "seen", "unread", "unseen"] as const;

/**
 * `previousStep`: `field` names the earlier step (its uuid), `value` the state its message must be
 * in (read, seen, unread, unseen). As Novu: when that step sent nothing there is nothing to judge,
 * and the condition holds.
 */
function previousStepCondition(
  child: FilterChild,
  raw: string,
  context: FilterContext,
): Verdict & { actual: unknown } {
  const state = raw.trim().toLowerCase();
  if (!(PREVIOUS_STEP_STATES as readonly string[]).includes(state)) {
    return { passed: false, actual: undefined, note: "expects read, seen, unread or unseen" };
  }
  const messages = context.previousSteps ?? {};
  const message = Object.hasOwn(messages, child.field) ? messages[child.field] : undefined;
  if (!message) return { passed: true, actual: undefined, note: "the step sent no message" };
  const actual = state === "read" || state === "unread" ? message.read : message.seen;
  return { passed: state.startsWith("un") ? !actual : actual, actual };
}

/**
 * A condition's text may be a template, as in Novu (`{{payload.limit}}`), rendered as text with what
 * the notification knows; anything else is used as written.
 */
function expectedText(child: FilterChild, context: FilterContext): { text: string; note?: string } {
  if (!child.value.includes("{{")) return { text: child.value };
  const data = {
    payload: context.payload ?? {},
    subscriber: context.subscriber ?? {},
    tenant: context.tenant ?? {},
    actor: context.actor ?? {},
    step: context.step ?? {},
  };
  // Judged on the event loop, with no thread to hand a costly template to: a condition's value may
  // use variables and the cheap helpers, and gets a render's slice of the loop.
  if (!rendersInline(child.value, "text")) {
    return {
      text: child.value,
      note: "a condition's value cannot loop or use json, sortBy, unique or groupBy",
    };
  }
  let rendered = renderTemplate(child.value, data, { escape: "text", timeoutMs: INLINE_SLICE_MS });
  // A cheap template takes microseconds: past its slice, the process was most likely kept from the
  // CPU (a loaded machine, a collection). Once more with a render's whole time, so that the verdict
  // does not depend on the machine's load.
  if (rendered.exceeded?.limit === "time") rendered = renderTemplate(child.value, data, { escape: "text" });
  if (rendered.exceeded?.limit === "time") {
    return { text: "", note: `the value takes longer than ${DEFAULT_RENDER_LIMITS.timeoutMs} ms to render` };
  }
  if (rendered.exceeded) return { text: "", note: `the value ${rendered.exceeded.reason}` };
  const { text, problems } = rendered;
  return problems.length > 0 ? { text, note: problems.join("; ") } : { text };
}

const SOURCES: Partial<Record<FilterOn, (context: FilterContext) => unknown>> = {
  payload: (context) => context.payload,
  subscriber: (context) => context.subscriber,
  tenant: (context) => context.tenant,
  webhook: (context) => context.webhook,
};

/** One child of a filter, judged. Never throws, whatever the field holds. */
export function evaluateCondition(child: FilterChild, context: FilterContext): ConditionOutcome {
  const { text: expected, note: templateNote } = expectedText(child, context);
  const base = { on: child.on, field: child.field, operator: child.operator, expected };
  let verdict: Verdict & { actual: unknown };
  if (child.on === "isOnline" || child.on === "isOnlineInLast")
    verdict = onlineCondition(child, expected, context);
  else if (child.on === "previousStep") verdict = previousStepCondition(child, expected, context);
  else {
    const source = SOURCES[child.on]?.(context);
    const actual = readPath(source, child.field);
    verdict = { ...compare(child.operator, actual, expected), actual };
    if (child.on === "webhook" && source === undefined) verdict.note = "no webhook response to read";
  }
  const note = [templateNote, verdict.note].filter(Boolean).join("; ");
  return { ...base, actual: display(verdict.actual), passed: verdict.passed, ...(note ? { note } : {}) };
}

/**
 * One filter: its children combined with its `value` (OR: any holds; anything else: all hold), then
 * inverted when `isNegated`. A filter without children holds (Novu), so a negated one never does.
 * Every child is judged, none skipped, so the outcome explains itself.
 */
export function evaluateFilter(filter: Filter, context: FilterContext): FilterOutcome {
  const conditions = filter.children.map((child) => evaluateCondition(child, context));
  const combined =
    filter.value === "OR" && conditions.length > 0
      ? conditions.some((c) => c.passed)
      : conditions.every((c) => c.passed);
  const negated = filter.isNegated === true;
  return { passed: negated ? !combined : combined, negated, combinator: filter.value, conditions };
}

/**
 * Whether a step runs: it has no filters, or any of them holds (OR across filters). Novu ignores
 * `isNegated`; the contract does not, and neither do we.
 */
export function stepPasses(filters: readonly Filter[], context: FilterContext): FilterResult {
  const outcomes = filters.map((filter) => evaluateFilter(filter, context));
  return { passed: outcomes.length === 0 || outcomes.some((o) => o.passed), filters: outcomes };
}

const MAX_REASON_CONDITIONS = 5;

function describeCondition(c: ConditionOutcome): string {
  const what = c.on === "isOnline" || c.on === "isOnlineInLast" ? c.on : `${c.on}.${c.field}`;
  const note = c.note ? ` (${c.note})` : "";
  return `${what} ${c.operator} "${c.expected}" was ${c.actual}${note}`;
}

/**
 * Why a step was filtered out, for its execution detail: "filtered:" and, for each filter, the
 * conditions that decided it (those that failed; for a negated filter, those that held).
 */
export function filteredReason(result: FilterResult): string {
  if (result.passed) return "not filtered: the step's conditions hold";
  const parts: string[] = [];
  let shown = 0;
  for (const [i, filter] of result.filters.entries()) {
    const deciding = filter.conditions.filter((c) => c.passed === filter.negated);
    const label = `filter ${i + 1}${filter.negated ? " (negated)" : ""}`;
    if (deciding.length === 0) {
      parts.push(`${label}: ${filter.conditions.length === 0 ? "no conditions" : "its conditions"}`);
      continue;
    }
    const listed = deciding.slice(0, Math.max(0, MAX_REASON_CONDITIONS - shown));
    shown += listed.length;
    const more = deciding.length - listed.length;
    const text = listed.map(describeCondition).join(", ");
    if (listed.length === 0) parts.push(`${label}: ${more} conditions`);
    else parts.push(`${label}: ${text}${more > 0 ? ` and ${more} more` : ""}`);
  }
  return `${FILTERED_DETAIL}: no filter passed; ${parts.join("; ")}`;
}
