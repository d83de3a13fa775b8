import Handlebars from "handlebars";
import type { StepType } from "../workflows/domain.ts";
import { compileCheck, parseTemplate } from "../workflows/service.ts";
import { registerHelpers } from "./template-helpers.ts";

/**
 * How a rendered value is written: `html` escapes it as Handlebars' `{{ }}` does (& < > " ' ` =),
 * for content that is read as HTML; `text` writes it as it is, for content that is not HTML, where
 * an escape would show as a literal `&amp;`.
 */
export type EscapeMode = "html" | "text";

export interface RenderResult {
  text: string;
  /** What went wrong while rendering (unknown helper, failing helper, template error); empty when nothing. */
  problems: string[];
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

// Problems of the render under way. Rendering is synchronous, so one slot is enough; the helpers
// report into it.
let problems: string[] | undefined;
const report = (problem: string) => problems?.push(problem);

const handlebars = Handlebars.create();
registerHelpers(handlebars, report);

type Compiled = (data: unknown, options?: Handlebars.RuntimeOptions) => string;
type CacheEntry = { render: Compiled } | { problem: string };

/**
 * Compiled templates by mode and source, least recently used out first. Bounded in entries and in
 * total source length, so a few huge templates cannot hold the memory a thousand small ones would.
 */
export class TemplateCache {
  readonly #entries = new Map<string, CacheEntry>();
  #chars = 0;

  constructor(
    readonly maxEntries = 1_000,
    readonly maxChars = 16 * 1024 * 1024,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: string, build: () => CacheEntry): CacheEntry {
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
  return { render: handlebars.compile(source, { noEscape: mode === "text" }) };
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

/**
 * Renders a template with its data. Never throws: a missing variable renders empty, an unknown or
 * failing helper renders empty and is reported, and a template that fails as a whole renders its
 * literal text without the expressions, with the reason in `problems`, so the step can record what
 * went wrong and still decide whether to send.
 */
export function renderTemplate(
  source: string,
  data: Record<string, unknown>,
  options: { escape?: EscapeMode } = {},
): RenderResult {
  if (!source.includes("{{")) return { text: source, problems: [] };
  const mode = options.escape ?? "html";
  const entry = templateCache.get(`${mode}:${source}`, () => compile(source, mode));
  if ("problem" in entry)
    return { text: literalText(source), problems: [`template does not compile: ${entry.problem}`] };
  const outer = problems;
  const found: string[] = [];
  problems = found;
  try {
    return { text: entry.render(data, RUNTIME), problems: found };
  } catch (error) {
    found.push(`template failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    return { text: literalText(source), problems: found };
  } finally {
    problems = outer;
  }
}
