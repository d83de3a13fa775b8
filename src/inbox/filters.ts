import { ApiError, type FieldError } from "../errors.ts";
import { SEVERITIES, type Severity } from "../workflows/domain.ts";

/**
 * The filters of Novu's current inbox (docs/engine.md, "The inbox"), read from what @novu/js sends
 * and checked as its own matcher reads them, so a notification is in a list (or a count) exactly
 * when the client would put it there. Pure functions: every problem is a 400 naming its field.
 */

/** A scalar a `data` filter compares: what JSON holds but objects and arrays. */
export type DataValue = string | number | boolean | null;

/** One `data` condition: the value at `path` must be one of each group's values (an array: contain one). */
export interface DataCondition {
  path: string[];
  /** AND of ORs; never empty, nor any group in it. */
  groups: DataValue[][];
}

export interface NotificationFilter {
  /** AND of ORs: a notification has a tag of every group. */
  tags?: string[][];
  read?: boolean;
  seen?: boolean;
  archived?: boolean;
  /** true: only the snoozed; false or absent: only those not snoozed (a snoozed one is hidden). */
  snoozed?: boolean;
  data?: DataCondition[];
  severity?: Severity[];
  /** Epoch ms, inclusive. */
  createdGte?: number;
  createdLte?: number;
}

// The client's own limits.
export const MAX_TAG_GROUPS = 30;
export const MAX_TAGS_PER_GROUP = 100;
export const MAX_TOTAL_TAGS = 200;
export const MAX_TAG_LENGTH = 200;
/** How deep a `data` filter may name a field (`{a: {b: 1}}` is two), as the client matches it. */
export const MAX_DATA_DEPTH = 2;
export const MAX_DATA_CONDITIONS = 50;
export const MAX_DATA_VALUES = 100;
export const MAX_COUNT_FILTERS = 30;

const problemAt = (field: string, message: string) =>
  new ApiError(400, `${field} ${message}`, [{ field, message }]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function tagGroup(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw problemAt(field, "must be an array of tags");
  if (value.length > MAX_TAGS_PER_GROUP)
    throw problemAt(field, `must hold at most ${MAX_TAGS_PER_GROUP} tags`);
  for (const tag of value) {
    if (typeof tag !== "string" || tag.length === 0 || tag.length > MAX_TAG_LENGTH)
      throw problemAt(field, `must hold tags of 1–${MAX_TAG_LENGTH} characters`);
  }
  return value as string[];
}

/**
 * Tags as the client sends them: a list (one OR group), `{or: [...]}`, or `{and: [{or: [...]}, ...]}`
 * (the query string's `tags[0][]`, `tags[1][]` arrive here as a list of lists). Empty means none: a
 * list or an object (@novu/api's models strip every tag from the object they send, leaving `{}`).
 */
export function readTags(value: unknown, field = "tags"): string[][] | undefined {
  if (value === undefined || value === null) return undefined;
  if (isObject(value) && Object.keys(value).length === 0) return undefined;
  let groups: string[][];
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    groups = Array.isArray(value[0])
      ? value.map((group, i) => tagGroup(group, `${field}[${i}]`))
      : [tagGroup(value, field)];
  } else if (isObject(value) && Object.keys(value).length === 1 && "or" in value) {
    groups = [tagGroup(value.or, `${field}.or`)];
  } else if (isObject(value) && Object.keys(value).length === 1 && "and" in value) {
    if (!Array.isArray(value.and)) throw problemAt(`${field}.and`, "must be an array of {or: [tags]}");
    groups = value.and.map((item, i) => {
      if (!isObject(item) || Object.keys(item).length !== 1 || !("or" in item))
        throw problemAt(`${field}.and[${i}]`, "must be {or: [tags]}");
      const group = tagGroup(item.or, `${field}.and[${i}].or`);
      if (group.length === 0) throw problemAt(`${field}.and[${i}].or`, "must not be empty");
      return group;
    });
  } else {
    throw problemAt(field, "must be a list of tags, {or: [tags]} or {and: [{or: [tags]}]}");
  }
  groups = groups.filter((group) => group.length > 0);
  if (groups.length > MAX_TAG_GROUPS) throw problemAt(field, `must have at most ${MAX_TAG_GROUPS} groups`);
  if (groups.flat().length > MAX_TOTAL_TAGS)
    throw problemAt(field, `must hold at most ${MAX_TOTAL_TAGS} tags in all`);
  return groups.length > 0 ? groups : undefined;
}

const isDataValue = (value: unknown): value is DataValue =>
  value === null ||
  typeof value === "string" ||
  typeof value === "boolean" ||
  (typeof value === "number" && Number.isFinite(value));

// Keys the client refuses to match; a quote or backslash cannot be named in a JSON path on SQLite.
const BAD_KEY = /^[$.]|["\\]|^$/;
const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

function dataGroups(value: unknown, field: string): DataValue[][] | undefined {
  const group = (values: unknown, at: string): DataValue[] => {
    if (!Array.isArray(values)) throw problemAt(at, "must be an array of values");
    if (values.length > MAX_DATA_VALUES) throw problemAt(at, `must hold at most ${MAX_DATA_VALUES} values`);
    if (!values.every(isDataValue)) throw problemAt(at, "must hold strings, numbers, booleans or null");
    return values;
  };
  if (isDataValue(value)) return [[value]];
  if (Array.isArray(value)) return value.length === 0 ? undefined : [group(value, field)];
  if (isObject(value) && Object.keys(value).length === 1 && "or" in value) {
    const values = group(value.or, `${field}.or`);
    return values.length === 0 ? undefined : [values];
  }
  if (isObject(value) && Object.keys(value).length === 1 && "and" in value) {
    if (!Array.isArray(value.and)) throw problemAt(`${field}.and`, "must be an array of {or: [values]}");
    const groups = value.and.map((item, i) => {
      if (!isObject(item) || Object.keys(item).length !== 1 || !("or" in item))
        throw problemAt(`${field}.and[${i}]`, "must be {or: [values]}");
      const values = group(item.or, `${field}.and[${i}].or`);
      if (values.length === 0) throw problemAt(`${field}.and[${i}].or`, "must not be empty");
      return values;
    });
    return groups.length === 0 ? undefined : groups;
  }
  throw problemAt(field, "must be a value, a list of values, {or: [values]} or {and: [{or: [values]}]}");
}

/**
 * A `data` filter: each field names a value of the notification's `data` (an object nests one level
 * more, two at most), compared as the client compares it: equal to the value (or to one of a list,
 * `{or}`; to one of each group, `{and}`), or, when the notification's value is a list, holding one.
 * A JSON string is read first (the query string and the bulk bodies send it so).
 */
export function readDataFilter(value: unknown, field = "data"): DataCondition[] | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  let object: unknown = value;
  if (typeof value === "string") {
    try {
      object = JSON.parse(value) as unknown;
    } catch {
      throw problemAt(field, "must be a JSON object");
    }
  }
  if (!isObject(object)) throw problemAt(field, "must be a JSON object");
  const conditions: DataCondition[] = [];
  const walk = (at: Record<string, unknown>, path: string[], name: string) => {
    for (const [key, item] of Object.entries(at)) {
      const itemName = `${name}.${key}`;
      if (BAD_KEY.test(key) || RESERVED_KEYS.has(key) || key.length > 100)
        throw problemAt(itemName, "is not a field a filter may name");
      if (isObject(item) && !("or" in item) && !("and" in item)) {
        if (path.length + 1 >= MAX_DATA_DEPTH)
          throw problemAt(itemName, `must not nest more than ${MAX_DATA_DEPTH} levels`);
        walk(item, [...path, key], itemName);
        continue;
      }
      const groups = dataGroups(item, itemName);
      if (groups) conditions.push({ path: [...path, key], groups });
      if (conditions.length > MAX_DATA_CONDITIONS)
        throw problemAt(field, `must name at most ${MAX_DATA_CONDITIONS} fields`);
    }
  };
  walk(object, [], field);
  return conditions.length > 0 ? conditions : undefined;
}

/** `severity`: one or a list of high, medium, low, none. */
export function readSeverity(value: unknown, field = "severity"): Severity[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return undefined;
  for (const item of list) {
    if (typeof item !== "string" || !(SEVERITIES as readonly string[]).includes(item))
      throw problemAt(field, `must be one or more of: ${SEVERITIES.join(", ")}`);
  }
  return [...new Set(list as Severity[])];
}

/** A moment in epoch milliseconds (a number, or its digits in a query string). */
export function readMoment(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const number = typeof value === "string" && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isSafeInteger(number) || number < 0 || number > 8.64e15)
    throw problemAt(field, "must be a moment in milliseconds since the epoch");
  return number;
}

/** A flag as the query string sends it ("true", "false") or as JSON has it. */
export function readFlag(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw problemAt(field, "must be true or false");
}

/** Every filter field the client may send, read into one filter; `prefix` names them in errors. */
export function readFilter(input: Record<string, unknown>, prefix = ""): NotificationFilter {
  const filter: NotificationFilter = {};
  const tags = readTags(input.tags, `${prefix}tags`);
  if (tags) filter.tags = tags;
  for (const flag of ["read", "seen", "archived", "snoozed"] as const) {
    const value = readFlag(input[flag], `${prefix}${flag}`);
    if (value !== undefined) filter[flag] = value;
  }
  const data = readDataFilter(input.data, `${prefix}data`);
  if (data) filter.data = data;
  const severity = readSeverity(input.severity, `${prefix}severity`);
  if (severity) filter.severity = severity;
  const gte = readMoment(input.createdGte, `${prefix}createdGte`);
  if (gte !== undefined) filter.createdGte = gte;
  const lte = readMoment(input.createdLte, `${prefix}createdLte`);
  if (lte !== undefined) filter.createdLte = lte;
  return filter;
}

const COUNT_FILTER_KEYS = new Set([
  "tags",
  "read",
  "seen",
  "archived",
  "snoozed",
  "data",
  "severity",
  "createdGte",
  "createdLte",
]);

/**
 * The count route's `filters`: a JSON array of at most 30 filters, each as the client builds it.
 * Returns each filter as sent (for the answer, which the client matches to its own) and as read.
 */
export function readCountFilters(
  text: string,
): { sent: Record<string, unknown>; filter: NotificationFilter }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw problemAt("filters", "must be a JSON array of filters");
  }
  if (!Array.isArray(parsed)) throw problemAt("filters", "must be a JSON array of filters");
  if (parsed.length === 0) throw problemAt("filters", "must hold at least one filter");
  if (parsed.length > MAX_COUNT_FILTERS)
    throw problemAt("filters", `must hold at most ${MAX_COUNT_FILTERS} filters`);
  const errors: FieldError[] = [];
  const read = parsed.map((sent, i) => {
    const field = `filters[${i}]`;
    if (!isObject(sent)) throw problemAt(field, "must be an object");
    for (const key of Object.keys(sent)) {
      if (!COUNT_FILTER_KEYS.has(key)) errors.push({ field: `${field}.${key}`, message: "is not allowed" });
    }
    return { sent, filter: readFilter(sent, `${field}.`) };
  });
  const first = errors[0];
  if (first) throw new ApiError(400, `${first.field} ${first.message}`, errors);
  return read;
}
