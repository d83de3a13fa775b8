import assert from "node:assert/strict";
import { test } from "node:test";
import {
  compileCheck,
  MAX_BLOCK_DEPTH,
  MAX_EXPRESSIONS,
  MAX_SUBEXPRESSION_DEPTH,
  MAX_WORKFLOW_EXPRESSIONS,
  stepTemplateErrors,
  templateVariables,
} from "./templates.ts";

test("compileCheck: what compiles", () => {
  const good = [
    "",
    "Plain text, no mustaches",
    "Hello {{firstName}}",
    "{{{rawHtml}}}",
    "{{#if vip}}VIP{{else}}regular{{/if}}",
    "{{#each items}}{{name}}{{/each}}",
    "{{#each items as |item i|}}{{i}}: {{item.name}}{{/each}}",
    "{{#with user}}{{name}}{{/with}}",
    "{{uppercase (lowercase name)}} {{numberFormat price decimalLength=2}}",
    "{{!-- a comment --}}{{! another }}",
    "{{{{raw}}}} {{not.a.variable}} {{{{/raw}}}}",
    "}} stray closing braces are text",
    `${"{{#if a}}".repeat(MAX_BLOCK_DEPTH)}x${"{{/if}}".repeat(MAX_BLOCK_DEPTH)}`,
    // {{^}} and {{else}} are no new level.
    `${"{{#if a}}x{{^}}y".repeat(MAX_BLOCK_DEPTH)}${"{{/if}}".repeat(MAX_BLOCK_DEPTH)}`,
    `{{h ${"(h ".repeat(MAX_SUBEXPRESSION_DEPTH - 1)}x${")".repeat(MAX_SUBEXPRESSION_DEPTH - 1)}}}`,
    "{{a}}".repeat(MAX_EXPRESSIONS),
    "(((((( parentheses in text are text )))))) {{a}}",
  ];
  for (const source of good) assert.equal(compileCheck(source), undefined, source.slice(0, 60));
});

test("compileCheck: what does not, each with one sentence saying why", () => {
  const cases: [string, RegExp][] = [
    ["{{#if}", /^parse error on line 1: unexpected a character that does not belong/],
    ["Hello {{name", /^parse error on line 1/],
    ["{{#if vip}}VIP", /^parse error on line 1: unexpected the end of the template/],
    ["{{else}}", /unexpected \{\{else\}\} outside a block/],
    ["line one\nline two\n{{ }}", /^parse error on line 3/],
    ["{{#each items}}x{{/if}}", /^each doesn't match if \(line 1, column 3\)$/],
    ["{{> footer}}", /partial on line 1: partials are not supported/],
    ["{{#> layout}}x{{/layout}}", /partials are not supported/],
    ["{{* decorator}}", /decorators are not supported/],
    ["{{#if a b}}x{{/if}}", /\{\{#if\}\} on line 1 takes exactly one argument/],
    ["{{#unless}}x{{/unless}}", /\{\{#unless\}\} on line 1 takes exactly one argument/],
    ["{{#each}}x{{/each}}", /\{\{#each\}\} on line 1 takes exactly one argument/],
    ["\n{{#with a b}}x{{/with}}", /\{\{#with\}\} on line 2 takes exactly one argument/],
    [
      `${"{{#if a}}".repeat(MAX_BLOCK_DEPTH + 1)}x${"{{/if}}".repeat(MAX_BLOCK_DEPTH + 1)}`,
      /nests blocks more than 64 deep/,
    ],
    [`${"{{#if a}}".repeat(2_000)}${"{{/if}}".repeat(2_000)}`, /nests blocks more than 64 deep/],
    [`${"{{~#each a}}".repeat(MAX_BLOCK_DEPTH + 1)}`, /nests blocks more than 64 deep/],
    [`{{h ${"(h ".repeat(100_000)}x${")".repeat(100_000)}}}`, /nests sub-expressions more than 16 deep/],
    ["{{a}}".repeat(MAX_EXPRESSIONS + 1), /has more than 5000 expressions/],
  ];
  for (const [source, expected] of cases) {
    const problem = compileCheck(source);
    assert.ok(problem, `${source.slice(0, 40)} should not compile`);
    assert.match(problem, expected, source.slice(0, 40));
    assert.ok(!problem.includes("\n"), "one line");
  }
});

test("templateVariables: payload variables from the syntax tree, in order of first use", () => {
  const cases: [string, string[]][] = [
    ["", []],
    ["no mustaches at all", []],
    ["Hi {{firstName}}, you have {{count}} posts", ["firstName", "count"]],
    ["{{payload.code}} and {{code}} are one variable", ["code"]],
    ["{{user.plan}} {{payload.user.plan}}", ["user.plan"]],
    ["{{{html}}} {{&unescaped}}", ["html", "unescaped"]],
    ["{{json}} {{uppercase}} name helpers, not variables", []],
    [
      "{{subscriber.firstName}} {{step.total_count}} {{tenant.name}} {{actor.firstName}} {{branding.logo}}",
      [],
    ],
    ["{{payload}} names no variable", []],
    ["{{#each items}}{{name}} {{this}} {{@index}}{{/each}}", ["items"]],
    ["{{#each items as |item i|}}{{item.name}} {{i}}{{/each}}", ["items"]],
    ["{{#each items}}{{../title}}{{/each}}", ["items", "title"]],
    ["{{#each items}}{{@root.title}}{{/each}}", ["items", "title"]],
    ["{{#each items}}x{{else}}{{emptyText}}{{/each}}", ["items", "emptyText"]],
    ["{{#each payload.items}}{{name}}{{/each}}", ["items"]],
    ["{{#each step.events}}{{payload.title}}{{/each}}", []],
    ["{{#with user}}{{name}} {{address.city}}{{/with}}", ["user", "user.name", "user.address.city"]],
    ["{{#with user as |u|}}{{u.name}}{{/with}}", ["user", "user.name"]],
    ["{{#with subscriber}}{{firstName}}{{/with}}", []],
    [
      "{{#with user}}{{#with address}}{{city}} {{../name}}{{/with}}{{/with}}",
      ["user", "user.address", "user.address.city", "user.name"],
    ],
    ["{{#if vip}}{{discount}}{{else}}{{price}}{{/if}}", ["vip", "discount", "price"]],
    ["{{#unless muted}}{{message}}{{/unless}}", ["muted", "message"]],
    ["{{#if a}}{{#each list}}{{x}}{{/each}}{{../up}}{{/if}}", ["a", "list"]],
    ["{{uppercase name}}", ["name"]],
    ["{{pluralize count 'post' 'posts'}}", ["count"]],
    ["{{numberFormat price decimalLength=digits}}", ["price", "digits"]],
    ["{{uppercase (lowercase title)}}", ["title"]],
    ["{{#equals status 'done'}}{{doneText}}{{/equals}}", ["status", "doneText"]],
    ["{{#items}}{{name}}{{/items}}", ["items"]],
    ["{{this.name}} at the root", ["name"]],
    ["{{./name}} at the root", ["name"]],
    ["{{this}} {{.}}", []],
    ["{{!-- {{commented}} --}} {{! {{also}} }}", []],
    ["{{{{raw}}}}{{not.a.variable}}{{{{/raw}}}}", []],
    ["{{lookup items 0}}", ["items"]],
    ["{{items.[0].name}}", ["items.0.name"]],
    ["{{ spaced }}", ["spaced"]],
    ["{{true}} {{42}} {{'text'}}", []],
    ["Hi {{name", []],
  ];
  for (const [source, expected] of cases) assert.deepEqual(templateVariables(source), expected, source);
});

test("stepTemplateErrors: each string that does not compile, named by its path", () => {
  const steps = [
    { template: { type: "sms", content: "Code {{code}}" } },
    { template: { type: "delay" } },
    {
      template: {
        type: "email",
        subject: "Hi {{name",
        content: [
          { type: "text", content: "ok {{x}}" },
          { type: "text", content: "{{#if a}}open" },
        ],
        cta: { data: { url: "https://x.test/{{id}}" } },
        "odd key": "{{> partial}}",
      },
    },
  ];
  const errors = stepTemplateErrors(steps);
  assert.deepEqual(
    errors.map((e) => e.field),
    ["steps[2].template.subject", "steps[2].template.content[1].content", 'steps[2].template["odd key"]'],
  );
  for (const error of errors) assert.match(error.message, /^does not compile as a Handlebars template: /);
  assert.deepEqual(stepTemplateErrors(steps.slice(0, 2)), []);
});

test("stepTemplateErrors: a budget of expressions for the whole workflow, checked before parsing", () => {
  const sms = (content: string) => ({ template: { type: "sms", content } });
  assert.deepEqual(stepTemplateErrors([sms("{{a}} {{b}}"), sms("{{c}}")]), []);
  // The first text is over its own limit (refused before parsing); the second takes the workflow
  // over, and the check stops there: the broken third text is never parsed, so not reported.
  const over = [
    sms("{{a}}".repeat(MAX_EXPRESSIONS + 1)),
    sms("{{a}}".repeat(MAX_WORKFLOW_EXPRESSIONS - MAX_EXPRESSIONS)),
  ];
  assert.deepEqual(stepTemplateErrors([...over, sms("{{never.parsed")]), [
    {
      field: "steps[0].template.content",
      message: `does not compile as a Handlebars template: has more than ${MAX_EXPRESSIONS} expressions`,
    },
    { field: "steps", message: "use more than 10000 template expressions in all" },
  ]);
});
