import Handlebars from "handlebars";
import type { FieldError } from "../errors.ts";

/**
 * Step templates as Handlebars, for the parts the workflows layer needs at save time: whether a
 * template compiles, and which payload variables it uses. Rendering is the engine's (it is above
 * workflows and imports this; never the other way round).
 */

type Node = hbs.AST.Node;
type Program = hbs.AST.Program;
type Expression = hbs.AST.Expression;
type PathExpression = hbs.AST.PathExpression;
type Hash = hbs.AST.Hash;

/**
 * Limits that keep a save cheap: Handlebars' parser slows down more than linearly with nesting (2,000
 * nested blocks take about a second) and its compiler with size (10,000 expressions take seconds), and
 * a 1 MiB request could hold far more of either. No real message comes near them.
 */
export const MAX_BLOCK_DEPTH = 64;
export const MAX_SUBEXPRESSION_DEPTH = 16;
export const MAX_EXPRESSIONS = 5_000;
export const MAX_WORKFLOW_EXPRESSIONS = 10_000;

/**
 * The helpers templates may call: Handlebars' own and the ones the engine adds (Novu's set, so
 * templates written for Novu render the same; src/engine/template-helpers.ts implements them). A
 * bare `{{name}}` is a variable unless it names one of these.
 */
export const TEMPLATE_HELPERS = [
  // Handlebars' built-ins.
  "if",
  "unless",
  "each",
  "with",
  "lookup",
  "log",
  "blockHelperMissing",
  "helperMissing",
  // The engine's.
  "raw",
  "json",
  "equals",
  "titlecase",
  "uppercase",
  "lowercase",
  "pluralize",
  "unique",
  "groupBy",
  "sortBy",
  "numberFormat",
  "gt",
  "gte",
  "lt",
  "lte",
  "eq",
  "ne",
] as const;
const HELPER_NAMES: ReadonlySet<string> = new Set(TEMPLATE_HELPERS);

// Built-in block helpers that throw at render time unless given exactly one argument.
const ONE_ARGUMENT = new Set(["if", "unless", "with", "each"]);

// Roots the engine fills itself (templateData in src/engine/render.ts): not payload a caller sends.
// `branding` is Novu's system variable; it names no payload either.
/**
 * The variables the engine gives every template besides the payload, with their types, as Novu
 * lists them (`GET /v1/workflows/variables`): the subscriber, the trigger's actor, a digest's
 * `step`, the organization's branding and the trigger's tenant.
 */
export const SYSTEM_VARIABLES = {
  subscriber: {
    firstName: "string",
    lastName: "string",
    email: "string",
    phone: "string",
    avatar: "string",
    locale: "string",
    subscriberId: "string",
  },
  actor: {
    firstName: "string",
    lastName: "string",
    email: "string",
    phone: "string",
    avatar: "string",
    locale: "string",
    subscriberId: "string",
  },
  step: { digest: "boolean", events: "array", total_count: "number" },
  branding: { logo: "string", color: "string" },
  tenant: { name: "string", data: "object" },
} as const satisfies Record<string, Record<string, string>>;

const ENGINE_ROOTS = new Set<string>(Object.keys(SYSTEM_VARIABLES));

class TemplateProblem extends Error {}

// Handlebars' parser names tokens; these are the ones a person can act on.
const TOKEN_WORDS: Record<string, string> = {
  EOF: "the end of the template (a block or an expression is not closed)",
  INVALID: "a character that does not belong in an expression",
  INVERSE: "{{else}} outside a block",
  CLOSE: "}} (an expression is incomplete)",
  OPEN_ENDBLOCK: "a closing tag",
};

/** Handlebars' multi-line parse error as one sentence (the error body's message is one line). */
function describeParseError(error: unknown): string {
  if (error instanceof RangeError) return "is nested too deeply to parse";
  const text = error instanceof Error ? error.message : String(error);
  const parse = /^Parse error on line (\d+):[\s\S]*got '([A-Z_]+)'/.exec(text);
  if (parse) {
    const token = parse[2] ?? "";
    return `parse error on line ${parse[1]}: unexpected ${TOKEN_WORDS[token] ?? token.toLowerCase()}`;
  }
  // e.g. "each doesn't match if - 1:3": the block names and where.
  const located = /^(.*) - (\d+):(\d+)$/.exec(text.split("\n")[0] ?? "");
  if (located) return `${located[1]} (line ${located[2]}, column ${located[3]})`;
  return (text.split("\n")[0] ?? "").slice(0, 200) || "does not compile";
}

function lineOf(node: Node): number {
  return node.loc?.start.line ?? 1;
}

/** How many `{{` a text holds: an upper bound of its expressions, for the workflow-wide budget. */
export function expressionCount(source: string): number {
  let count = 0;
  for (let at = source.indexOf("{{"); at !== -1; at = source.indexOf("{{", at + 2)) count++;
  return count;
}

const BLOCK_MARK = /\{\{~?([#/]|\^(?!~?\}\}))/g;

/**
 * The limits, checked on the text before the parser sees it (the parser is what they protect).
 * Lexical, so a `{{#` inside a comment counts too: over the limits only.
 */
function prescreen(source: string): string | undefined {
  if (expressionCount(source) > MAX_EXPRESSIONS) return `has more than ${MAX_EXPRESSIONS} expressions`;
  let depth = 0;
  for (const [, mark] of source.matchAll(BLOCK_MARK)) {
    depth += mark === "/" ? -1 : 1;
    if (depth > MAX_BLOCK_DEPTH) return `nests blocks more than ${MAX_BLOCK_DEPTH} deep`;
  }
  for (let open = source.indexOf("{{"); open !== -1; open = source.indexOf("{{", open + 2)) {
    const close = source.indexOf("}}", open + 2);
    const end = close === -1 ? source.length : close;
    let parens = 0;
    for (let i = open + 2; i < end; i++) {
      const c = source.charCodeAt(i);
      if (c === 40 /* ( */ && ++parens > MAX_SUBEXPRESSION_DEPTH) {
        return `nests sub-expressions more than ${MAX_SUBEXPRESSION_DEPTH} deep`;
      }
      if (c === 41 /* ) */) parens--;
    }
    if (close === -1) break;
    open = close;
  }
  return undefined;
}

/** Refuses what parses but can only fail at render time: partials, decorators, wrong arity. */
function checkNode(node: Node, depth: number): void {
  switch (node.type) {
    case "PartialStatement":
    case "PartialBlockStatement":
      throw new TemplateProblem(`uses a partial on line ${lineOf(node)}: partials are not supported`);
    case "Decorator":
    case "DecoratorBlock":
      throw new TemplateProblem(`uses a decorator on line ${lineOf(node)}: decorators are not supported`);
    case "BlockStatement": {
      if (depth >= MAX_BLOCK_DEPTH)
        throw new TemplateProblem(`nests blocks more than ${MAX_BLOCK_DEPTH} deep`);
      const block = node as hbs.AST.BlockStatement;
      const name = block.path.type === "PathExpression" ? block.path.original : "";
      if (ONE_ARGUMENT.has(name) && block.params.length !== 1) {
        throw new TemplateProblem(`{{#${name}}} on line ${lineOf(node)} takes exactly one argument`);
      }
      for (const child of block.program?.body ?? []) checkNode(child, depth + 1);
      for (const child of block.inverse?.body ?? []) checkNode(child, depth + 1);
      return;
    }
    default:
      return;
  }
}

/** Handlebars' syntax tree of a template within the limits; a TemplateProblem otherwise. */
export function parseTemplate(source: string): Program {
  const problem = prescreen(source);
  if (problem !== undefined) throw new TemplateProblem(problem);
  try {
    return Handlebars.parse(source);
  } catch (error) {
    throw new TemplateProblem(describeParseError(error));
  }
}

/**
 * Why `source` would not render, in one sentence, or undefined when it would. Run when a workflow
 * is saved, so a broken template is the author's 400 rather than a failed delivery later. The
 * parse and the checks above are the whole test: what Handlebars' compiler refuses beyond them
 * (partial arguments, knownHelpersOnly) cannot occur here, and compiling costs far more than
 * parsing.
 */
export function compileCheck(source: string): string | undefined {
  // Text without a mustache is a template of plain text: nothing to parse.
  if (!source.includes("{{")) return undefined;
  try {
    for (const node of parseTemplate(source).body) checkNode(node, 0);
    return undefined;
  } catch (error) {
    return error instanceof TemplateProblem ? error.message : describeParseError(error);
  }
}

/** What a path means where it stands: segments from the data root, or undefined when unknowable. */
type Prefix = readonly string[] | undefined;

interface Scope {
  /** The context's path from the root; undefined inside `each` (an item of a list). */
  context: Prefix;
  /** Block parameters visible here (`as |item index|`). */
  params: ReadonlyMap<string, Prefix>;
}

const SCOPED = /^(this|\.)[./]/;

function resolve(path: PathExpression, scopes: readonly Scope[]): Prefix {
  if (path.data) return path.parts[0] === "root" ? path.parts.slice(1) : undefined;
  const scope = scopes[scopes.length - 1 - path.depth];
  if (!scope) return undefined;
  const [head, ...rest] = path.parts;
  if (head === undefined) return undefined;
  if (path.depth === 0 && !SCOPED.test(path.original)) {
    for (let i = scopes.length - 1; i >= 0; i--) {
      const bound = scopes[i]?.params;
      if (bound?.has(head)) {
        const prefix = bound.get(head);
        return prefix && [...prefix, ...rest];
      }
    }
  }
  return scope.context && [...scope.context, ...path.parts];
}

/** A payload variable's name for a resolved path; undefined for the roots the engine fills. */
function payloadName(segments: Prefix): string | undefined {
  if (!segments || segments.length === 0) return undefined;
  const [head, ...rest] = segments;
  if (head === undefined || ENGINE_ROOTS.has(head)) return undefined;
  if (head === "payload") return rest.length > 0 ? rest.join(".") : undefined;
  return segments.join(".");
}

class VariableCollector {
  readonly names = new Set<string>();

  program(program: Program | undefined, scopes: readonly Scope[]): void {
    for (const node of program?.body ?? []) this.statement(node, scopes);
  }

  private add(path: PathExpression, scopes: readonly Scope[]): Prefix {
    const resolved = resolve(path, scopes);
    const name = payloadName(resolved);
    if (name !== undefined) this.names.add(name);
    return resolved;
  }

  private expression(node: Expression, scopes: readonly Scope[]): Prefix {
    if (node.type === "PathExpression") return this.add(node as PathExpression, scopes);
    if (node.type === "SubExpression") this.call(node as hbs.AST.SubExpression, scopes);
    return undefined;
  }

  /** A helper call's arguments; a bare path with neither is a variable itself. */
  private call(
    node: { path: PathExpression | Expression; params: Expression[]; hash?: Hash },
    scopes: readonly Scope[],
  ): Prefix {
    const pairs = node.hash?.pairs ?? [];
    const helper =
      node.path.type === "PathExpression" && HELPER_NAMES.has((node.path as PathExpression).original);
    if (node.params.length === 0 && pairs.length === 0 && !helper) return this.expression(node.path, scopes);
    const first = node.params.map((param) => this.expression(param, scopes))[0];
    for (const pair of pairs) this.expression(pair.value, scopes);
    return first;
  }

  private statement(node: Node, scopes: readonly Scope[]): void {
    switch (node.type) {
      case "MustacheStatement":
        this.call(node as hbs.AST.MustacheStatement, scopes);
        return;
      case "BlockStatement":
        this.block(node as hbs.AST.BlockStatement, scopes);
        return;
      case "PartialStatement":
      case "PartialBlockStatement": {
        const partial = node as hbs.AST.PartialStatement;
        for (const param of partial.params) this.expression(param, scopes);
        return;
      }
      default:
        return;
    }
  }

  private block(block: hbs.AST.BlockStatement, scopes: readonly Scope[]): void {
    const name = block.path.type === "PathExpression" ? block.path.original : "";
    const subject = this.call(block, scopes);
    const outer = scopes[scopes.length - 1];
    let inner: Prefix;
    if (name === "with") inner = subject;
    else if (name === "each" || (block.params.length === 0 && !HELPER_NAMES.has(name))) {
      // An item of a list, or a Mustache-style section whose value decides the context: unknowable.
      inner = undefined;
    } else {
      // if, unless and helpers run their body in the same context.
      inner = outer?.context;
    }
    const changesContext =
      name === "with" || name === "each" || (block.params.length === 0 && !HELPER_NAMES.has(name));
    const params = new Map(
      (block.program?.blockParams ?? []).map((param, i) => [
        param,
        i === 0 && name === "with" ? subject : undefined,
      ]),
    );
    const bodyScope: Scope = changesContext
      ? { context: inner, params }
      : { context: outer?.context, params: new Map([...(outer?.params ?? []), ...params]) };
    this.program(
      block.program,
      changesContext ? [...scopes, bodyScope] : [...scopes.slice(0, -1), bodyScope],
    );
    // {{else}} runs in the enclosing context.
    this.program(block.inverse, scopes);
  }
}

/**
 * The payload variables a template reads, in order of first use, found on Handlebars' own syntax
 * tree: `{{payload.x}}` and `{{x}}` both name `x`; `subscriber`, `step`, `tenant`, `actor` are the
 * engine's; helpers' arguments count, helper names do not; inside `{{#each list}}` the paths name
 * fields of an item, not of the payload, so only `list` counts; `{{#with user}}{{name}}` is
 * `user.name`; block parameters and `this` alone name nothing. A template that does not parse
 * names nothing (saving it is refused elsewhere).
 */
export function templateVariables(source: string): string[] {
  if (!source.includes("{{")) return [];
  const collector = new VariableCollector();
  try {
    collector.program(parseTemplate(source), [{ context: [], params: new Map() }]);
  } catch {
    // A template too deep to walk names what was found before the limit.
  }
  return [...collector.names];
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MAX_WALK_DEPTH = 32;

/** Every string inside a step's template, with the path a client would name it by. */
export function* templateStrings(value: unknown, path: string, depth = 0): Generator<[string, string]> {
  if (depth > MAX_WALK_DEPTH) return;
  if (typeof value === "string") yield [path, value];
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* templateStrings(item, `${path}[${i}]`, depth + 1);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const step = IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
      yield* templateStrings(item, `${path}${step}`, depth + 1);
    }
  }
}

/**
 * The field errors of the steps' templates: each string that does not compile, named like
 * `steps[0].template.content`, and the workflow-wide budget of expressions.
 */
export function stepTemplateErrors(steps: readonly { template: unknown }[]): FieldError[] {
  const errors: FieldError[] = [];
  let expressions = 0;
  for (const [i, step] of steps.entries()) {
    for (const [field, text] of templateStrings(step.template, `steps[${i}].template`)) {
      expressions += expressionCount(text);
      // Before parsing: the budget is what bounds the parser's work for the whole request.
      if (expressions > MAX_WORKFLOW_EXPRESSIONS) {
        errors.push({
          field: "steps",
          message: `use more than ${MAX_WORKFLOW_EXPRESSIONS} template expressions in all`,
        });
        return errors;
      }
      const problem = compileCheck(text);
      if (problem !== undefined) {
        errors.push({ field, message: `does not compile as a Handlebars template: ${problem}` });
      }
    }
  }
  return errors;
}
