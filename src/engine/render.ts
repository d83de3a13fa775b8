import Handlebars from "handlebars";
import type { StepType } from "../workflows/domain.ts";
import { compileCheck, parseTemplate } from "../workflows/index.ts";
import { type RenderGuard, registerHelpers } from "./template-helpers.ts";

/**
 * How a rendered value is written: `html` escapes it as Handlebars' `{{ }}` does (& < > " ' ` =),
 * for content that is read as HTML; `text` writes it as it is, for content that is not HTML, where
 * an escape would show as a literal `&amp;`.
 */
export type EscapeMode = "html" | "text";

/**
 * What a render may spend (docs: README, "Security"). Time is for all of a step's fields together;
 * output is per field. Past either, or past MAX_RENDER_ITERATIONS, the render stops and the step
 * fails: a template runs on data the caller chose, and without a bound a few hundred bytes of
 * payload can ask for billions of loop iterations.
 */
export interface RenderLimits {
  /** RENDER_TIMEOUT_MS */
  readonly timeoutMs: number;
  /** RENDER_MAX_BYTES: the size of one rendered field, in UTF-8 bytes. */
  readonly maxBytes: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = Object.freeze({ timeoutMs: 50, maxBytes: 256 * 1024 });

/**
 * How long a template judged cheap (`rendersInline`) may run on the event loop before it is handed
 * to a render thread with the whole time budget. A cheap template takes microseconds; one that
 * takes this long is built to, and the event loop is not where it runs.
 */
export const INLINE_SLICE_MS = 5;

/** Loop iterations one field may run (`each`, and a section over a list). */
export const MAX_RENDER_ITERATIONS = 100_000;

/** Which limit a render ran into. `memory`: the render thread ran out of the memory it is given. */
export type RenderLimit = "time" | "output" | "iterations" | "memory";

export interface RenderExceeded {
  limit: RenderLimit;
  /** What happened, naming the limit and the setting that sets it, e.g. "renders more than 262144 bytes (RENDER_MAX_BYTES)". */
  reason: string;
}

export interface RenderResult {
  text: string;
  /** What went wrong while rendering (unknown helper, failing helper, template error); empty when nothing. */
  problems: string[];
  /** Set when the render ran into a limit: `text` is then empty, and nothing of it may be sent. */
  exceeded?: RenderExceeded;
}

export interface TemplateInput {
  payload?: Record<string, unknown> | undefined;
  subscriber?: Record<string, unknown> | undefined;
  tenant?: Record<string, unknown> | undefined;
  actor?: Record<string, unknown> | undefined;
  /** The digested events' payloads, oldest first; absent when no digest ran before the step. */
  events?: readonly Record<string, unknown>[] | undefined;
}

/**
 * What a template sees (docs/engine.md, "Running a notification"): the payload's fields at the root, as Novu
 * templates expect (`{{name}}`), and also under `payload`; then the roots the engine fills, which win over a
 * payload field of the same name so a caller cannot impersonate the subscriber.
 */
export function templateData(input: TemplateInput): Record<string, unknown> {
  const payload = input.payload ?? {};
  const events = input.events ?? [];
  return {
    ...payload,
    payload,
    subscriber: input.subscriber ?? {},
    step: { digest: events.length > 0, events, total_count: events.length },
    tenant: input.tenant ?? {},
    actor: input.actor ?? {},
  };
}

// Fields that hold HTML: an email's body (a string, or the editor's blocks) and preheader, and the
// in-app content (Novu's inbox widget shows it as HTML, so an unescaped payload value could inject
// markup). Everything else (subjects, SMS, push, chat, URLs, sender names) is text.
const HTML_FIELDS: Partial<Record<StepType, readonly string[]>> = {
  email: ["content", "preheader"],
  in_app: ["content"],
};

/** The escape mode for a template field of a step, by the field's top-level name (`content[0].content` is `content`). */
export function escapeModeFor(stepType: StepType, field: string): EscapeMode {
  const root = /^[^.[]*/.exec(field)?.[0] ?? field;
  return HTML_FIELDS[stepType]?.includes(root) ? "html" : "text";
}

// ---------------------------------------------------------------------------------------------
// The budget of the render under way. Rendering is synchronous, so one slot is enough; the
// helpers and the output hook check it as they run, and stop the render by throwing.

class Exceeded extends Error {
  constructor(readonly exceeded: RenderExceeded) {
    super(exceeded.reason);
  }
}

interface Budget {
  problems: string[];
  /** performance.now() past which the render stops. */
  deadline: number;
  timeoutMs: number;
  maxBytes: number;
  /** Characters written through the output hook so far: a lower bound of the output's length. */
  written: number;
  iterations: number;
}

let budget: Budget | undefined;

export const exceededReason = {
  time: (timeoutMs: number): RenderExceeded => ({
    limit: "time",
    reason: `takes longer than ${timeoutMs} ms to render (RENDER_TIMEOUT_MS)`,
  }),
  output: (maxBytes: number): RenderExceeded => ({
    limit: "output",
    reason: `renders more than ${maxBytes} bytes (RENDER_MAX_BYTES)`,
  }),
  iterations: (): RenderExceeded => ({
    limit: "iterations",
    reason: `loops more than ${MAX_RENDER_ITERATIONS} times`,
  }),
  memory: (): RenderExceeded => ({ limit: "memory", reason: "needs more memory than a render is given" }),
};

function tick(): void {
  const current = budget;
  if (current && performance.now() > current.deadline)
    throw new Exceeded(exceededReason.time(current.timeoutMs));
}

/** Counts `chars` more of output; throws once the field is over its size. */
function spend(chars: number): void {
  const current = budget;
  if (!current) return;
  current.written += chars;
  if (current.written > current.maxBytes) throw new Exceeded(exceededReason.output(current.maxBytes));
}

const guard: RenderGuard = {
  report: (problem) => budget?.problems.push(problem),
  tick,
  iterate() {
    const current = budget;
    if (!current) return;
    if (++current.iterations > MAX_RENDER_ITERATIONS) throw new Exceeded(exceededReason.iterations());
    tick();
  },
  produced(chars) {
    // A block's body was rendered once more: its text is part of the output to come.
    const current = budget;
    if (current && chars > current.maxBytes) throw new Exceeded(exceededReason.output(current.maxBytes));
  },
  isBudgetError: (error) => error instanceof Exceeded,
};

const handlebars = Handlebars.create();
registerHelpers(handlebars, guard);

// Lists shown as Handlebars shows them (joined by commas), nested up to this depth.
const MAX_DISPLAY_DEPTH = 32;

/**
 * A value as `{{value}}` writes it (empty for null and undefined, a list joined by commas), built
 * no further than the room left in the field: a list of a million items stops at what fits.
 */
function display(value: unknown, room: number, depth = 0): string {
  if (value === null || value === undefined) return "";
  if (typeof value !== "object") return String(value);
  if (!Array.isArray(value)) {
    try {
      return String(value);
    } catch {
      // An object whose own `toString` is data, not a function.
      return "[object Object]";
    }
  }
  if (depth >= MAX_DISPLAY_DEPTH)
    throw new Error(`a list nested more than ${MAX_DISPLAY_DEPTH} deep cannot be shown`);
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const part = display(value[i], room - length, depth + 1);
    length += part.length + (i > 0 ? 1 : 0);
    if (length > room) throw new Exceeded(exceededReason.output(budget?.maxBytes ?? room));
    parts.push(part);
  }
  return parts.join(",");
}

// Every `{{…}}` of a template is rewritten to go through this helper (see `instrument`): the one
// place a value becomes output, so the output is counted as it grows, and the time checked.
// Its name cannot be written in a template: `<` and `>` end a Handlebars identifier.
const OUT = "<out>";
function out(value: unknown, options: Handlebars.HelperOptions): string {
  tick();
  const room = (budget?.maxBytes ?? Number.POSITIVE_INFINITY) - (budget?.written ?? 0);
  let text = display(value, room);
  // Escaping only lengthens it: a value already too long is refused before it is escaped.
  if (text.length > room) throw new Exceeded(exceededReason.output(budget?.maxBytes ?? room));
  if (options.hash.escape === true) text = handlebars.escapeExpression(text);
  spend(text.length);
  return text;
}
handlebars.registerHelper(OUT, out);

/**
 * Where a template that calls no helper is compiled: an instance with the output helper alone
 * (not even Handlebars' own). Handlebars copies and wraps every helper of a template's instance on
 * each render (some forty here, about 7 KB of garbage a render); once instrumented, such a template
 * calls only the output helper, and reads its values as the same template compiled with every
 * helper would.
 */
const plain = Handlebars.create();
for (const name of Object.keys(plain.helpers)) plain.unregisterHelper(name);
plain.registerHelper(OUT, out);

// Block helpers whose body runs at most once: a template made of these (and of no helper that
// walks a whole list) does work in proportion to its own size and to the values it writes.
const ONCE_BLOCKS = new Set(["if", "unless", "with", "raw", "equals", "gt", "gte", "lt", "lte", "eq", "ne"]);
// Helpers whose cost grows with a list or a whole object of the data.
const DATA_HELPERS = new Set(["json", "sortBy", "unique", "groupBy"]);

type Node = hbs.AST.Node;
type Program = hbs.AST.Program;

interface Shape {
  /** Whether the template loops (each, a section over a list) or calls a helper that walks the data. */
  heavy: boolean;
  /** Whether it calls any helper (a block is one), besides the output helper `instrument` adds. */
  helpers: boolean;
}

/** Handlebars reads a literal in place of a path (`{{"a b"}}`) as the path of that name. */
function pathOf(node: hbs.AST.MustacheStatement): hbs.AST.PathExpression {
  const path = node.path as hbs.AST.PathExpression | hbs.AST.Literal;
  if (path.type === "PathExpression") return path as hbs.AST.PathExpression;
  const literal = path as hbs.AST.StringLiteral;
  const name = String(literal.original);
  return { type: "PathExpression", data: false, depth: 0, parts: [name], original: name, loc: path.loc };
}

const helperName = (path: Node): string | undefined =>
  path.type === "PathExpression" ? (path as hbs.AST.PathExpression).original : undefined;

function notice(shape: Shape, name: string | undefined): void {
  if (name !== undefined && DATA_HELPERS.has(name)) shape.heavy = true;
}

function visitExpression(node: Node, shape: Shape): void {
  if (node.type !== "SubExpression") return;
  const sexpr = node as hbs.AST.SubExpression;
  notice(shape, helperName(sexpr.path));
  for (const param of sexpr.params) visitExpression(param, shape);
  for (const pair of sexpr.hash?.pairs ?? []) visitExpression(pair.value, shape);
}

/**
 * Rewrites each `{{…}}` of the program to pass its value through the output helper, with whether
 * it is escaped (`{{x}}` in HTML) or not (`{{{x}}}`, or any text field); notes the template's shape.
 */
function instrument(program: Program, mode: EscapeMode, shape: Shape): void {
  program.body = program.body.map((node) => {
    if (node.type === "BlockStatement") {
      shape.helpers = true;
      const block = node as hbs.AST.BlockStatement;
      const name = helperName(block.path);
      if (name === undefined || !ONCE_BLOCKS.has(name)) shape.heavy = true;
      notice(shape, name);
      for (const param of block.params) visitExpression(param, shape);
      for (const pair of block.hash?.pairs ?? []) visitExpression(pair.value, shape);
      if (block.program) instrument(block.program, mode, shape);
      if (block.inverse) instrument(block.inverse, mode, shape);
      return block;
    }
    if (node.type !== "MustacheStatement") {
      if (node.type !== "ContentStatement" && node.type !== "CommentStatement") shape.helpers = true;
      return node;
    }
    const mustache = node as hbs.AST.MustacheStatement;
    const path = pathOf(mustache);
    notice(shape, path.original);
    for (const param of mustache.params) visitExpression(param, shape);
    for (const pair of mustache.hash?.pairs ?? []) visitExpression(pair.value, shape);
    // `{{name}}` calls the helper of that name when there is one, else reads the value: as an
    // argument, a bare path is always read, so a helper call becomes a sub-expression.
    const callsHelper =
      mustache.params.length > 0 ||
      (mustache.hash?.pairs.length ?? 0) > 0 ||
      (path.parts.length === 1 && !path.data && Object.hasOwn(handlebars.helpers, path.original));
    if (callsHelper) shape.helpers = true;
    const value: hbs.AST.Expression = callsHelper
      ? ({
          type: "SubExpression",
          path,
          params: mustache.params,
          hash: mustache.hash,
          loc: mustache.loc,
        } as hbs.AST.SubExpression)
      : path;
    const escapes = mode === "html" && mustache.escaped;
    const flag = { type: "BooleanLiteral", value: escapes, original: escapes, loc: mustache.loc };
    return {
      type: "MustacheStatement",
      path: { type: "PathExpression", data: false, depth: 0, parts: [OUT], original: OUT, loc: mustache.loc },
      params: [value],
      hash: {
        type: "Hash",
        pairs: [{ type: "HashPair", key: "escape", value: flag, loc: mustache.loc }],
        loc: mustache.loc,
      },
      escaped: false,
      strip: mustache.strip,
      loc: mustache.loc,
    } as hbs.AST.MustacheStatement;
  });
}

type Compiled = (data: unknown, options?: Handlebars.RuntimeOptions) => string;
type CacheEntry = { render: Compiled; heavy: boolean; ready: boolean } | { problem: string };

/**
 * Compiled templates by mode and source, least recently used out first. Bounded in entries and in
 * total source length, so a few huge templates cannot hold the memory a thousand small ones would.
 */
export class TemplateCache<Entry = CacheEntry> {
  readonly #entries = new Map<string, Entry>();
  #chars = 0;

  constructor(
    readonly maxEntries = 1_000,
    readonly maxChars = 16 * 1024 * 1024,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: string, build: () => Entry): Entry {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit;
    }
    const entry = build();
    if (key.length > this.maxChars) return entry;
    this.#entries.set(key, entry);
    this.#chars += key.length;
    for (const [oldest] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#chars <= this.maxChars) break;
      this.#entries.delete(oldest);
      this.#chars -= oldest.length;
    }
    return entry;
  }

  clear(): void {
    this.#entries.clear();
    this.#chars = 0;
  }
}

export const templateCache = new TemplateCache();

function compile(source: string, mode: EscapeMode): CacheEntry {
  // The save-time check again: a template may come from elsewhere (an override), and the limits it
  // enforces are what keep Handlebars' compiler fast.
  const problem = compileCheck(source);
  if (problem !== undefined) return { problem };
  const program = parseTemplate(source);
  const shape: Shape = { heavy: false, helpers: false };
  instrument(program, mode, shape);
  // Handlebars compiles to JavaScript on the first render (`prepare`): only where the template runs.
  const render = (shape.helpers ? handlebars : plain).compile(program, {
    noEscape: true,
    knownHelpers: { [OUT]: true },
  });
  return { render, heavy: shape.heavy, ready: false };
}

const compiled = (source: string, mode: EscapeMode) =>
  templateCache.get(`${mode}:${source}`, () => compile(source, mode));

/**
 * The template compiled to JavaScript, before any budget runs: compiling is the template's cost, not
 * the data's, and a template was bounded when it was saved. Compiling is Handlebars' first render,
 * here on no data, which loops over nothing.
 */
function prepare(entry: CacheEntry): void {
  if ("problem" in entry || entry.ready) return;
  entry.ready = true;
  try {
    entry.render({}, RUNTIME);
  } catch {
    // A template that fails on no data may still render on some; the real render reports it.
  }
}

/** Compiles the templates ahead of rendering them (a render thread does, before its step's time runs). */
export function prepareTemplates(fields: readonly { source: string; escape: EscapeMode }[]): void {
  for (const field of fields) if (field.source.includes("{{")) prepare(compiled(field.source, field.escape));
}

/**
 * Whether the template may render on the event loop: it loops over nothing and calls no helper that
 * walks the data, so each of its expressions runs once and costs what the value it writes costs
 * (which the output limit bounds). Everything else renders on a render thread.
 */
export function rendersInline(source: string, mode: EscapeMode): boolean {
  if (!source.includes("{{")) return true;
  const entry = compiled(source, mode);
  return "problem" in entry || !entry.heavy;
}

/** The template's literal text without any of its expressions: what is left when rendering fails. */
function literalText(source: string): string {
  try {
    return parseTemplate(source)
      .body.filter((node): node is hbs.AST.ContentStatement => node.type === "ContentStatement")
      .map((node) => node.value)
      .join("");
  } catch {
    return "";
  }
}

// Handlebars' defaults already refuse inherited properties and methods (`{{constructor}}`,
// `{{__proto__}}`); stated here so no global setting elsewhere can turn them on for us.
const RUNTIME: Handlebars.RuntimeOptions = {
  allowProtoPropertiesByDefault: false,
  allowProtoMethodsByDefault: false,
};

export interface RenderOptions {
  escape?: EscapeMode;
  limits?: RenderLimits;
  /** How long this render may take once its template is compiled; default: the limits' time. */
  timeoutMs?: number;
  /**
   * performance.now() past which the render stops, for renders that share one budget (a step's
   * fields on a thread, whose templates are compiled first); overrides `timeoutMs`.
   */
  deadline?: number;
}

function overSize(text: string, maxBytes: number): boolean {
  // A UTF-8 byte is at least one UTF-16 unit and at most three: count only when it could matter.
  return text.length > maxBytes || (text.length * 3 > maxBytes && Buffer.byteLength(text) > maxBytes);
}

/**
 * Renders a template with its data, within the limits, on the calling thread. Never throws: a
 * missing variable renders empty, an unknown or failing helper renders empty and is reported, and
 * a template that fails as a whole renders its literal text without the expressions, with the
 * reason in `problems`, so the step can record what went wrong and still decide whether to send.
 * A render that runs into a limit answers `exceeded` and no text.
 */
export function renderTemplate(
  source: string,
  data: Record<string, unknown>,
  options: RenderOptions = {},
): RenderResult {
  const limits = options.limits ?? DEFAULT_RENDER_LIMITS;
  const over = (): RenderResult => ({
    text: "",
    problems: [],
    exceeded: exceededReason.output(limits.maxBytes),
  });
  if (!source.includes("{{"))
    return overSize(source, limits.maxBytes) ? over() : { text: source, problems: [] };
  const mode = options.escape ?? "html";
  const entry = compiled(source, mode);
  if ("problem" in entry)
    return { text: literalText(source), problems: [`template does not compile: ${entry.problem}`] };
  prepare(entry);
  const outer = budget;
  const found: string[] = [];
  budget = {
    problems: found,
    deadline: options.deadline ?? performance.now() + (options.timeoutMs ?? limits.timeoutMs),
    timeoutMs: limits.timeoutMs,
    maxBytes: limits.maxBytes,
    written: 0,
    iterations: 0,
  };
  try {
    const text = entry.render(data, RUNTIME);
    return overSize(text, limits.maxBytes) ? over() : { text, problems: found };
  } catch (error) {
    if (error instanceof Exceeded) return { text: "", problems: [], exceeded: error.exceeded };
    // A string past the engine's own maximum length is output over any limit.
    if (error instanceof RangeError && /Invalid string length/.test(error.message)) return over();
    found.push(`template failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    return { text: literalText(source), problems: found };
  } finally {
    budget = outer;
  }
}

/** A template field of a step, to render. */
export interface FieldTemplate {
  /** The field's name in the step's template (`content`, `content[2].url`, `subject`). */
  field: string;
  source: string;
  escape: EscapeMode;
}

/**
 * Renders a step's fields one after the other within one time budget, stopping at the first that
 * runs into a limit (what the render threads run for a step; see render-pool.ts).
 */
export function renderFields(
  fields: readonly FieldTemplate[],
  data: Record<string, unknown>,
  limits: RenderLimits,
): RenderResult[] {
  prepareTemplates(fields);
  const deadline = performance.now() + limits.timeoutMs;
  const results: RenderResult[] = [];
  for (const field of fields) {
    const result = renderTemplate(field.source, data, { escape: field.escape, limits, deadline });
    results.push(result);
    if (result.exceeded) break;
  }
  return results;
}
