/**
 * A topic subscription's condition (docs/engine.md, "Subscribers, topics and preferences"): a JSON
 * Logic rule over `{payload}`, as Novu's inbox sends it. The operators below are JSON Logic's, with
 * its truthiness (an empty array is false); anything else is refused when the condition is set, so
 * a stored condition always evaluates.
 */

export type Rule = unknown;

const OPERATORS = new Set([
  "var",
  "==",
  "===",
  "!=",
  "!==",
  "!",
  "!!",
  "and",
  "or",
  "if",
  "<",
  "<=",
  ">",
  ">=",
  "in",
]);

export const MAX_CONDITION_BYTES = 4096;
const MAX_DEPTH = 16;

const isOperation = (rule: unknown): rule is Record<string, unknown> =>
  typeof rule === "object" && rule !== null && !Array.isArray(rule) && Object.keys(rule).length === 1;

/** What is wrong with a condition, or undefined when it can be stored and evaluated. */
export function conditionProblem(rule: Rule): string | undefined {
  if (Buffer.byteLength(JSON.stringify(rule) ?? "") > MAX_CONDITION_BYTES)
    return `must be at most ${MAX_CONDITION_BYTES} bytes as JSON`;
  const visit = (node: unknown, depth: number): string | undefined => {
    if (depth > MAX_DEPTH) return `must nest at most ${MAX_DEPTH} levels`;
    if (Array.isArray(node)) {
      for (const item of node) {
        const problem = visit(item, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    if (typeof node !== "object" || node === null) return undefined;
    if (!isOperation(node)) return "must be a JSON Logic rule: an object has exactly one operator";
    const [operator, args] = Object.entries(node)[0] as [string, unknown];
    if (!OPERATORS.has(operator))
      return `uses the operator ${JSON.stringify(operator).slice(0, 40)}, which is not one of ${[...OPERATORS].join(" ")}`;
    return visit(args, depth + 1);
  };
  return visit(rule, 0);
}

/** JSON Logic's truthiness: JavaScript's, except that an empty array is false. */
const truthy = (value: unknown) => (Array.isArray(value) ? value.length > 0 : Boolean(value));

function lookup(data: unknown, path: unknown): unknown {
  if (path === null || path === undefined || path === "") return data;
  let at: unknown = data;
  for (const key of String(path).split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    if (!Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function apply(rule: Rule, data: unknown): unknown {
  if (Array.isArray(rule)) return rule.map((item) => apply(item, data));
  if (!isOperation(rule)) return rule;
  const [operator, raw] = Object.entries(rule)[0] as [string, unknown];
  const list = Array.isArray(raw) ? raw : [raw];
  if (operator === "var") {
    const [path, fallback] = list.map((item) => apply(item, data));
    const found = lookup(data, path);
    return found === undefined || found === null ? (fallback ?? found ?? null) : found;
  }
  // and, or and if evaluate lazily, as JSON Logic does.
  if (operator === "and") {
    let value: unknown = true;
    for (const item of list) {
      value = apply(item, data);
      if (!truthy(value)) return value;
    }
    return value;
  }
  if (operator === "or") {
    let value: unknown = false;
    for (const item of list) {
      value = apply(item, data);
      if (truthy(value)) return value;
    }
    return value;
  }
  if (operator === "if") {
    let i = 0;
    for (; i + 1 < list.length; i += 2) if (truthy(apply(list[i], data))) return apply(list[i + 1], data);
    return i < list.length ? apply(list[i], data) : null;
  }
  const args = list.map((item) => apply(item, data));
  const [a, b, c] = args;
  switch (operator) {
    case "==":
      // biome-ignore lint/suspicious/noDoubleEquals: JSON Logic's == is JavaScript's loose equality.
      return a == b;
    case "===":
      return a === b;
    case "!=":
      // biome-ignore lint/suspicious/noDoubleEquals: as above.
      return a != b;
    case "!==":
      return a !== b;
    case "!":
      return !truthy(a);
    case "!!":
      return truthy(a);
    case "<":
      return c === undefined
        ? (a as number) < (b as number)
        : (a as number) < (b as number) && (b as number) < (c as number);
    case "<=":
      return c === undefined
        ? (a as number) <= (b as number)
        : (a as number) <= (b as number) && (b as number) <= (c as number);
    case ">":
      return (a as number) > (b as number);
    case ">=":
      return (a as number) >= (b as number);
    case "in":
      if (typeof b === "string") return b.includes(String(a));
      return Array.isArray(b) ? b.includes(a) : false;
    default:
      return false;
  }
}

/** Whether the condition holds for a trigger's payload; a result that is not `true` is false (as Novu). */
export function conditionHolds(rule: Rule, payload: Record<string, unknown>): boolean {
  try {
    return apply(rule, { payload }) === true;
  } catch {
    return false;
  }
}
