import type { HelperDelegate, HelperOptions } from "handlebars";
import type { TEMPLATE_HELPERS } from "../workflows/index.ts";

/**
 * The helpers Novu registers for its templates (json, equals, titlecase, ... numberFormat, gt...ne),
 * so a template written for Novu renders the same here, plus `raw` for literal `{{ }}` in raw blocks.
 * Where Novu's own code would throw or mutate (uppercase of a number, sortBy sorting the payload in
 * place, numberFormat ignoring a decimalLength of 0) these do the evident thing instead. A helper
 * that fails renders empty and reports why; it never breaks the message around it.
 */

type EngineHelper = Exclude<
  (typeof TEMPLATE_HELPERS)[number],
  "if" | "unless" | "each" | "with" | "lookup" | "log" | "blockHelperMissing" | "helperMissing"
>;

/**
 * What the helpers tell the render under way (src/engine/render.ts): problems to record, and the
 * budget's checks. A check that fails throws an error `isBudgetError` knows, which the helpers let
 * through, so the whole render stops rather than the one helper.
 */
export interface RenderGuard {
  report(problem: string): void;
  /** Throws when the render is past its time. */
  tick(): void;
  /** One loop iteration more; throws past the iterations or the time a render may take. */
  iterate(): void;
  /** A loop has written this many characters so far; throws when that is more than a field may hold. */
  produced(chars: number): void;
  isBudgetError(error: unknown): boolean;
}

// Handlebars passes the context as `this` and the options last; the signature is variadic by design.
type Helper = (this: unknown, ...args: unknown[]) => unknown;

const isOptions = (value: unknown): value is HelperOptions =>
  typeof value === "object" && value !== null && "hash" in value && "data" in value;

/** The block form runs the body or the {{else}}; as an expression (`(gt a b)`) it is a boolean. */
function decide(context: unknown, condition: boolean, options: unknown): unknown {
  if (isOptions(options) && typeof options.fn === "function") {
    return condition ? options.fn(context) : options.inverse(context);
  }
  return condition;
}

/** A property the item owns, never one inherited from its prototype (`constructor`, `__proto__`). */
function own(item: unknown, property: unknown): unknown {
  if (typeof item !== "object" || item === null || typeof property !== "string") return undefined;
  return Object.hasOwn(item, property) ? (item as Record<string, unknown>)[property] : undefined;
}

const text = (value: unknown): string => (value === undefined || value === null ? "" : String(value));

const compare = (a: unknown, b: unknown) =>
  (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;

function numberFormat(value: unknown, options: unknown): unknown {
  const hash = isOptions(options) ? (options.hash as Record<string, unknown>) : {};
  const number = typeof value === "number" ? value : Number.parseFloat(text(value));
  if (!Number.isFinite(number)) return value;
  const decimals = Math.min(20, Math.max(0, Math.trunc(Number(hash.decimalLength ?? 2)) || 0));
  const thousands = text(hash.thousandsSep ?? ",");
  const decimalSep = text(hash.decimalSep ?? ".");
  const [whole = "", fraction] = number.toFixed(decimals).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, thousands);
  return fraction === undefined ? grouped : `${grouped}${decimalSep}${fraction}`;
}

const HELPERS: Record<EngineHelper, Helper> = {
  raw(options) {
    return isOptions(options) ? options.fn(this) : "";
  },
  json: (value) => JSON.stringify(value) ?? "",
  equals(a, b, options) {
    // biome-ignore lint/suspicious/noDoubleEquals: Novu's equals is loose on purpose (1 equals "1").
    return decide(this, a == b, options);
  },
  titlecase: (value) =>
    text(value)
      .split(" ")
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
      .join(" "),
  uppercase: (value) => text(value).toUpperCase(),
  lowercase: (value) => text(value).toLowerCase(),
  pluralize: (count, single, plural) => (count === 1 ? single : plural),
  unique(list, property) {
    if (!Array.isArray(list)) return "";
    return [...new Set(list.map((item) => own(item, property)).filter(Boolean))];
  },
  groupBy(list, property) {
    if (!Array.isArray(list)) return [];
    const groups = new Map<string, unknown[]>();
    for (const item of list) {
      const key = own(item, property);
      if (!key) continue;
      const name = String(key);
      const group = groups.get(name);
      if (group) group.push(item);
      else groups.set(name, [item]);
    }
    return [...groups].map(([key, items]) => ({ key, items }));
  },
  sortBy(list, property) {
    if (!Array.isArray(list)) return "";
    // A copy: the payload is shared by every template of the message.
    if (typeof property !== "string") return [...list].sort();
    return [...list].sort((a, b) => compare(own(a, property), own(b, property)));
  },
  numberFormat,
  gt(a, b, options) {
    return decide(this, (a as number) > (b as number), options);
  },
  gte(a, b, options) {
    return decide(this, (a as number) >= (b as number), options);
  },
  lt(a, b, options) {
    return decide(this, (a as number) < (b as number), options);
  },
  lte(a, b, options) {
    return decide(this, (a as number) <= (b as number), options);
  },
  eq(a, b, options) {
    return decide(this, a === b, options);
  },
  ne(a, b, options) {
    return decide(this, a !== b, options);
  },
};

export const ENGINE_HELPER_NAMES = Object.keys(HELPERS);

interface HelperRegistry {
  readonly helpers: Record<string, unknown>;
  registerHelper(name: string, fn: HelperDelegate): void;
}

// A block's body as Handlebars hands it to a helper: a function with its program's properties.
type BlockProgram = ((context: unknown, options?: unknown) => string) & Record<string, unknown>;

/** The body of a loop, counting each run as an iteration and the text it has written so far. */
function counted(fn: BlockProgram, guard: RenderGuard): BlockProgram {
  let written = 0;
  const run = (context: unknown, options?: unknown) => {
    guard.iterate();
    const text = fn(context, options);
    written += text.length;
    guard.produced(written);
    return text;
  };
  return Object.assign(run, fn);
}

/**
 * Registers the helpers on a Handlebars instance, each guarded, and replaces Handlebars' missing
 * helper (which throws) with one that renders empty and reports, so one unknown helper costs one
 * field, not the message. Handlebars' own block helpers are wrapped so that each loop iteration
 * (`each`, and a section over a list, which goes through `each`) counts against the render's budget,
 * and `log` writes nothing (a template must not reach the process's output).
 */
export function registerHelpers(handlebars: HelperRegistry, guard: RenderGuard): void {
  for (const [name, helper] of Object.entries(HELPERS)) {
    handlebars.registerHelper(name, function (this: unknown, ...args: unknown[]) {
      guard.tick();
      try {
        return helper.apply(this, args);
      } catch (error) {
        if (guard.isBudgetError(error)) throw error;
        guard.report(`helper ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
        return "";
      }
    });
  }
  const builtIn = (name: string) => handlebars.helpers[name] as Helper;
  const each = builtIn("each");
  handlebars.registerHelper("each", function (this: unknown, context: unknown, options: HelperOptions) {
    guard.tick();
    const fn = options?.fn as BlockProgram | undefined;
    if (typeof fn !== "function") return each.call(this, context, options);
    return each.call(this, context, { ...options, fn: counted(fn, guard) });
  });
  for (const name of ["if", "unless", "with", "lookup", "blockHelperMissing"]) {
    const original = builtIn(name);
    handlebars.registerHelper(name, function (this: unknown, ...args: unknown[]) {
      guard.tick();
      return original.apply(this, args);
    });
  }
  handlebars.registerHelper("log", () => undefined);
  handlebars.registerHelper("helperMissing", (...args: unknown[]) => {
    guard.tick();
    // Called with only the options for a plain `{{name}}` that is no variable: a missing field.
    if (args.length <= 1) return undefined;
    const options = args[args.length - 1];
    // Handlebars puts the called name on the options; its typings leave it out.
    const name = (options as { name?: unknown } | undefined)?.name;
    guard.report(`unknown helper "${typeof name === "string" ? name : "?"}"`);
    return "";
  });
}
