import assert from "node:assert/strict";
import { test } from "node:test";
import Handlebars from "handlebars";
import type { StepType } from "../workflows/domain.ts";
import { TEMPLATE_HELPERS } from "../workflows/templates.ts";
import {
  type EscapeMode,
  escapeModeFor,
  renderFields,
  rendersInline,
  renderTemplate,
  TemplateCache,
  templateCache,
  templateData,
} from "./render.ts";
import { ENGINE_HELPER_NAMES } from "./template-helpers.ts";

const data = templateData({
  payload: {
    name: "Ada",
    count: 3,
    vip: true,
    html: `<b>"Tom" & 'Jerry'</b>`,
    user: { plan: "pro", address: { city: "Lyon" } },
    items: [{ name: "one" }, { name: "two" }],
    subscriber: { firstName: "Impostor" },
  },
  subscriber: { subscriberId: "s-1", firstName: "Grace", email: "grace@example.test" },
  tenant: { identifier: "acme", name: "Acme" },
  actor: { firstName: "Linus" },
});

const render = (source: string, mode: EscapeMode = "html") => renderTemplate(source, data, { escape: mode });

test("renderTemplate: variables from the payload and the engine's roots; missing ones render empty", () => {
  const cases: [string, string][] = [
    ["Plain text, no expressions", "Plain text, no expressions"],
    ["Hi {{name}}", "Hi Ada"],
    ["Hi {{payload.name}}", "Hi Ada"],
    ["{{count}} new, vip {{vip}}", "3 new, vip true"],
    ["{{user.plan}} in {{user.address.city}}", "pro in Lyon"],
    ["<i>{{subscriber.firstName}}</i> {{subscriber.email}}", "<i>Grace</i> grace@example.test"],
    [
      "a payload field cannot pose as the subscriber: {{subscriber.firstName}}",
      "a payload field cannot pose as the subscriber: Grace",
    ],
    ["{{tenant.name}} / {{actor.firstName}}", "Acme / Linus"],
    ["[{{missing}}] [{{missing.deeper.still}}] [{{user.missing}}]", "[] [] []"],
    ["{{#each items}}{{name}},{{/each}}", "one,two,"],
    ["{{#each items as |item i|}}{{i}}={{item.name}} {{/each}}", "0=one 1=two "],
    ["{{#with user}}{{plan}}{{/with}}", "pro"],
    ["{{#if vip}}VIP{{else}}regular{{/if}}", "VIP"],
    ["{{#if missing}}yes{{else}}no{{/if}}", "no"],
    ["{{step.digest}} {{step.total_count}}", "false 0"],
    ["{{{{raw}}}}{{kept literally}}{{{{/raw}}}}", "{{kept literally}}"],
  ];
  for (const [source, expected] of cases) {
    assert.deepEqual(render(source), { text: expected, problems: [] }, source);
  }
});

test("renderTemplate: html escapes values as Handlebars does, text writes them as they are", () => {
  const cases: [string, EscapeMode, string][] = [
    ["{{html}}", "html", "&lt;b&gt;&quot;Tom&quot; &amp; &#x27;Jerry&#x27;&lt;/b&gt;"],
    ["{{{html}}}", "html", `<b>"Tom" & 'Jerry'</b>`],
    ["{{&html}}", "html", `<b>"Tom" & 'Jerry'</b>`],
    ["{{html}}", "text", `<b>"Tom" & 'Jerry'</b>`],
    ["<p>{{name}}</p>", "text", "<p>Ada</p>"],
  ];
  for (const [source, mode, expected] of cases) {
    assert.equal(render(source, mode).text, expected, `${mode}: ${source}`);
  }
  assert.equal(renderTemplate("{{html}}", data).text, render("{{html}}", "html").text, "html by default");
});

test("escapeModeFor: HTML for email bodies and in-app content, text for everything else", () => {
  const cases: [StepType, string, EscapeMode][] = [
    ["email", "content", "html"],
    ["email", "content[2].content", "html"],
    ["email", "preheader", "html"],
    ["email", "subject", "text"],
    ["email", "senderName", "text"],
    ["in_app", "content", "html"],
    ["in_app", "cta.data.url", "text"],
    ["sms", "content", "text"],
    ["chat", "content", "text"],
    ["push", "content", "text"],
    ["push", "title", "text"],
  ];
  for (const [type, field, expected] of cases)
    assert.equal(escapeModeFor(type, field), expected, `${type} ${field}`);
});

test("templateData: the payload at the root and under payload, the digest under step", () => {
  const events = [{ title: "first" }, { title: "second" }];
  const digested = templateData({ payload: { title: "first", step: "payload's own" }, events });
  assert.deepEqual(digested, {
    title: "first",
    payload: { title: "first", step: "payload's own" },
    step: { digest: true, events, total_count: 2 },
    subscriber: {},
    tenant: {},
    actor: {},
  });
  assert.equal(
    renderTemplate("{{step.total_count}}: {{#each step.events}}{{title}} {{/each}}", digested).text,
    "2: first second ",
  );
  assert.deepEqual(templateData({}), {
    payload: {},
    step: { digest: false, events: [], total_count: 0 },
    subscriber: {},
    tenant: {},
    actor: {},
  });
});

test("renderTemplate: prototype properties leak nothing", () => {
  const sources = [
    "{{constructor}}",
    "{{__proto__}}",
    "{{constructor.name}}",
    "{{payload.constructor.constructor}}",
    "{{subscriber.__proto__.toString}}",
    "{{#with constructor}}{{name}}{{/with}}",
    "{{#with __proto__}}{{constructor}}{{/with}}",
    '{{lookup this "constructor"}}',
    '{{lookup payload "__proto__"}}',
    "{{toString}}",
    "{{hasOwnProperty}}",
    "{{#each constructor}}x{{/each}}",
    "{{json constructor}}",
    '{{unique items "constructor"}}',
  ];
  for (const source of sources) {
    const { text } = render(source);
    assert.equal(text, "", `${source} rendered ${JSON.stringify(text)}`);
  }
  // Data that does own a key of that name is data: the payload's own value, not the prototype.
  const owned = JSON.parse('{"__proto__": "own value", "constructor": "own too"}');
  assert.equal(
    renderTemplate("{{__proto__}} {{constructor}}", templateData({ payload: owned })).text,
    "own value own too",
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("renderTemplate: a template that calls no helper renders as Handlebars renders it", () => {
  // Such templates compile on an instance that holds the output helper alone (render.ts, `plain`):
  // what they write must be what Handlebars itself writes for them, in both escape modes.
  const reference = Handlebars.create();
  const sources = [
    "Hello {{subscriber.firstName}}, event {{payload.n}}",
    "{{name}} {{count}} {{vip}} {{zero}} {{no}} {{nothing}} {{missing.deeper.still}}",
    "{{html}} / {{{html}}} / {{&html}}",
    "{{list}} {{nested}} {{user}} {{user.address.city}} {{user.address}}",
    "{{name.length}} {{list.length}} {{list.[1]}} {{[odd key]}} {{payload.[odd key]}}",
    "{{this.name}} {{./count}} {{@root.name}} {{@root.subscriber.subscriberId}}",
    "{{!-- a comment --}}{{! another }}text only around {{name}}",
    "{{constructor}} {{__proto__}} {{toString}} {{name.constructor}} {{user.hasOwnProperty}}",
    "emoji {{emoji}} and escapes {{quotes}} {{{quotes}}}",
    "{{~name~}}  spaced  {{~count}}",
  ];
  const input = templateData({
    payload: {
      name: "Ada",
      count: 3,
      zero: 0,
      vip: true,
      no: false,
      nothing: null,
      html: `<b>"Tom" & 'Jerry'</b> \`=`,
      list: [1, "two", null, [3, [4]]],
      nested: [[1, 2], [3]],
      user: { plan: "pro", address: { city: "Lyon" } },
      "odd key": "odd value",
      emoji: "\u{1F600} \u00e9",
      quotes: `'single' "double"`,
    },
    subscriber: { subscriberId: "s-1", firstName: "Grace" },
  });
  for (const source of sources)
    for (const mode of ["html", "text"] as const) {
      const expected = reference.compile(source, { noEscape: mode === "text" })(input, {
        allowProtoPropertiesByDefault: false,
        allowProtoMethodsByDefault: false,
      });
      const { text, problems } = renderTemplate(source, input, { escape: mode });
      assert.equal(text, expected, `${mode}: ${source}`);
      assert.deepEqual(problems, [], source);
    }
});

test("renderTemplate: never throws; what fails renders empty and is reported", () => {
  const cases: { source: string; data?: Record<string, unknown>; text: string; problem: RegExp }[] = [
    { source: "Hi {{shout name}}!", text: "Hi !", problem: /unknown helper "shout"/ },
    { source: "{{#shout name}}inside{{/shout}} after", text: " after", problem: /unknown helper "shout"/ },
    {
      source: "Hello {{name}} {{json big}}",
      data: { name: "Ada", big: 10n },
      text: "Hello Ada ",
      problem: /helper json failed/,
    },
    {
      source: "Dear {{boom}}, see you",
      data: {
        get boom() {
          throw new Error("a getter that throws");
        },
      },
      text: "Dear , see you",
      problem: /template failed: a getter that throws/,
    },
    { source: "Hello {{name", text: "", problem: /template does not compile: parse error on line 1/ },
    { source: "Before {{> footer}} after", text: "Before  after", problem: /partials are not supported/ },
  ];
  for (const c of cases) {
    // A deadline no loaded machine reaches: the failures here are the template's, not the clock's.
    const result = renderTemplate(c.source, c.data ?? data, { timeoutMs: 60_000 });
    assert.equal(result.text, c.text, c.source);
    assert.equal(result.problems.length, 1, `${c.source}: ${result.problems.join("; ")}`);
    assert.match(result.problems[0] ?? "", c.problem, c.source);
  }
  // Problems belong to one render: the next one starts clean.
  assert.deepEqual(render("{{name}}").problems, []);
});

test("the helpers: Novu's set, each in a table", () => {
  const helperData = templateData({
    payload: {
      name: "ada LOVELACE",
      one: 1,
      two: 2,
      oneText: "1",
      price: 1234567.891,
      negative: -9876.5,
      notANumber: "abc",
      things: [
        { kind: "b", n: 2 },
        { kind: "a", n: 3 },
        { kind: "b", n: 1 },
      ],
      letters: ["c", "a", "b"],
      nested: { a: [1, "x"] },
    },
  });
  const cases: [string, string][] = [
    ["{{titlecase name}}", "Ada Lovelace"],
    ["{{uppercase name}}", "ADA LOVELACE"],
    ["{{lowercase name}}", "ada lovelace"],
    ["{{uppercase one}} {{uppercase missing}}", "1 "],
    ['{{pluralize one "post" "posts"}} {{pluralize two "post" "posts"}}', "post posts"],
    ["{{{json nested}}}", '{"a":[1,"x"]}'],
    ["{{json missing}}", ""],
    ["{{#equals one oneText}}loose{{else}}strict{{/equals}}", "loose"],
    ["{{#eq one oneText}}loose{{else}}strict{{/eq}}", "strict"],
    ["{{#ne one two}}differ{{/ne}}", "differ"],
    ["{{#gt two one}}{{name}}{{/gt}}", "ada LOVELACE"],
    [
      "{{#gte one one}}yes{{/gte}} {{#lt two one}}yes{{else}}no{{/lt}} {{#lte one two}}yes{{/lte}}",
      "yes no yes",
    ],
    ["{{#if (gt two one)}}bigger{{/if}}", "bigger"],
    ["{{gt one two}}", "false"],
    ['{{unique things "kind"}}', "b,a"],
    ['{{#each (groupBy things "kind")}}{{key}}:{{items.length}} {{/each}}', "b:2 a:1 "],
    ['{{#each (sortBy things "n")}}{{n}}{{/each}} then {{#each things}}{{n}}{{/each}}', "123 then 231"],
    ["{{#each (sortBy letters)}}{{this}}{{/each}}", "abc"],
    ["{{numberFormat price}}", "1,234,567.89"],
    ["{{numberFormat price decimalLength=0}}", "1,234,568"],
    ['{{numberFormat price decimalLength=1 thousandsSep="." decimalSep=","}}', "1.234.567,9"],
    ["{{numberFormat negative}}", "-9,876.50"],
    ["{{numberFormat notANumber}}", "abc"],
    ['{{numberFormat "42"}}', "42.00"],
    ["{{{{raw}}}}{{name}}{{{{/raw}}}}", "{{name}}"],
  ];
  for (const [source, expected] of cases) {
    const result = renderTemplate(source, helperData);
    assert.deepEqual(result, { text: expected, problems: [] }, source);
  }
});

test("the helpers the templates layer lists are the ones the engine registers", () => {
  const builtIn = ["if", "unless", "each", "with", "lookup", "log", "blockHelperMissing", "helperMissing"];
  assert.deepEqual(
    [...ENGINE_HELPER_NAMES].sort(),
    TEMPLATE_HELPERS.filter((name) => !builtIn.includes(name)).sort(),
  );
});

test("compiled templates are cached, bounded in entries and in size, least recently used out first", () => {
  templateCache.clear();
  render("{{name}} cached");
  render("{{name}} cached");
  render("{{name}} cached", "text");
  assert.equal(templateCache.size, 2, "one entry per source and mode");

  const cache = new TemplateCache(3, 100);
  const built: string[] = [];
  const get = (key: string) =>
    cache.get(key, () => {
      built.push(key);
      return { problem: key };
    });
  for (const key of ["a", "b", "c"]) get(key);
  get("a"); // a is now the most recent
  get("d"); // b, the least recent, goes
  assert.equal(cache.size, 3);
  get("a");
  get("b");
  assert.deepEqual(built, ["a", "b", "c", "d", "b"]);
  get("x".repeat(60));
  get("y".repeat(50)); // over 100 characters: the oldest go until it fits
  assert.equal(cache.size, 1);
  get("z".repeat(101)); // larger than the whole cache: built, not kept
  assert.equal(cache.size, 1);
});

// ------------------------------------------------------------------ the render budget

const LIMITS = { timeoutMs: 10_000, maxBytes: 1024 };

test("render limits: loops past 100,000 iterations stop, whatever they write", () => {
  const list = templateData({ payload: { a: Array.from({ length: 100 }, (_, i) => i) } });
  const each = (depth: number, body: string) =>
    "{{#each @root.a}}".repeat(depth) + body + "{{/each}}".repeat(depth);
  for (const source of [each(4, "x"), each(4, ""), each(3, "{{#if this}}{{/if}}"), each(4, "{{this}}")]) {
    const result = renderTemplate(source, list, { limits: { timeoutMs: 60_000, maxBytes: 1024 * 1024 } });
    assert.deepEqual(
      result,
      { text: "", problems: [], exceeded: { limit: "iterations", reason: "loops more than 100000 times" } },
      source,
    );
  }
  // A section over a list loops through `each` too.
  const section = "{{#a}}{{#@root.a}}{{#@root.a}}{{#@root.a}}x{{/@root.a}}{{/@root.a}}{{/@root.a}}{{/a}}";
  assert.equal(
    renderTemplate(section, list, { limits: { timeoutMs: 60_000, maxBytes: 1024 * 1024 } }).exceeded?.limit,
    "iterations",
  );
  // Up to the limit, a loop is a loop (given time enough: what is tested is the count, not the clock).
  const roomy = { timeoutMs: 60_000, maxBytes: 1024 * 1024 };
  assert.equal(renderTemplate(each(2, "x"), list, { limits: roomy }).text, "x".repeat(10_000));
});

test("render limits: a field's output stops at RENDER_MAX_BYTES, however it grows", () => {
  const big = "<".repeat(600);
  const payload = templateData({
    payload: { big, list: Array.from({ length: 1_000_000 }, () => 7), n: [1, 2] },
  });
  const over = {
    text: "",
    problems: [],
    exceeded: { limit: "output", reason: "renders more than 1024 bytes (RENDER_MAX_BYTES)" },
  };
  const cases: [string, EscapeMode][] = [
    ["{{big}}{{big}}", "text"], // two values, each within the limit
    ["{{big}}", "html"], // escaping makes it four times as long
    ["{{list}}", "text"], // a million items, joined only as far as the room left
    ["{{#each n}}{{@root.big}}{{/each}}", "text"], // a loop's body, again and again
    [`{{{{raw}}}}${"y".repeat(2000)}{{{{/raw}}}}`, "text"], // literal text in a block
    ["z".repeat(2000), "text"], // plain text
    [`${"é".repeat(600)}{{n}}`, "text"], // 1,200 bytes of UTF-8 in 600 characters
  ];
  for (const [source, mode] of cases) {
    assert.deepEqual(
      renderTemplate(source, payload, { escape: mode, limits: LIMITS }),
      over,
      source.slice(0, 40),
    );
  }
  assert.equal(renderTemplate("{{big}}", payload, { escape: "text", limits: LIMITS }).text, big);
});

test("render limits: a render past its deadline stops with the time it was given", () => {
  const past = performance.now() - 1;
  for (const source of [
    "{{name}}",
    "{{#each items}}{{name}}{{/each}}",
    "{{uppercase name}}",
    "{{#if vip}}x{{/if}}",
  ]) {
    assert.deepEqual(
      renderTemplate(source, data, { limits: { timeoutMs: 25, maxBytes: 1024 }, deadline: past }),
      {
        text: "",
        problems: [],
        exceeded: { limit: "time", reason: "takes longer than 25 ms to render (RENDER_TIMEOUT_MS)" },
      },
      source,
    );
  }
  // Text without expressions does no work to time.
  assert.equal(renderTemplate("plain", data, { deadline: past }).text, "plain");
});

test("renderFields: a step's fields in order within one budget, stopping at the first over it", () => {
  const fields = [
    { field: "subject", source: "Hi {{name}}", escape: "text" as const },
    { field: "content", source: "{{#each items}}{{name}}{{/each}}{{big}}", escape: "html" as const },
    { field: "senderName", source: "never rendered", escape: "text" as const },
  ];
  const results = renderFields(fields, templateData({ payload: { ...data, big: "b".repeat(2000) } }), LIMITS);
  assert.deepEqual(results, [
    { text: "Hi Ada", problems: [] },
    {
      text: "",
      problems: [],
      exceeded: { limit: "output", reason: "renders more than 1024 bytes (RENDER_MAX_BYTES)" },
    },
  ]);
});

test("rendersInline: what loops or walks the data renders on a thread, the rest in place", () => {
  const cases: [string, boolean][] = [
    ["Hello {{subscriber.firstName}}", true],
    ["{{#if vip}}VIP{{else}}{{name}}{{/if}}", true],
    ["{{#with user}}{{plan}}{{/with}} {{uppercase name}} {{numberFormat count}}", true],
    ["{{#eq a b}}same{{/eq}} {{#if (gt a b)}}more{{/if}}", true],
    ["{{{{raw}}}}{{x}}{{{{/raw}}}}", true],
    ["no expressions", true],
    ["{{#each items}}{{name}}{{/each}}", false],
    ["{{#items}}{{name}}{{/items}}", false],
    ["{{#if vip}}{{else each items}}{{name}}{{/if}}", false],
    ["{{json payload}}", false],
    ["{{#if (sortBy items)}}x{{/if}}", false],
    ['{{lookup (groupBy items "kind") 0}}', false],
    ["{{unique items}}", false],
  ];
  for (const [source, inline] of cases) assert.equal(rendersInline(source, "html"), inline, source);
});

test("helpers: log writes nothing anywhere; groupBy takes a long list in one pass", () => {
  const written: unknown[] = [];
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  Object.assign(console, {
    log: (...args: unknown[]) => written.push(args),
    info: (...args: unknown[]) => written.push(args),
    warn: (...args: unknown[]) => written.push(args),
    error: (...args: unknown[]) => written.push(args),
  });
  try {
    assert.deepEqual(render('{{log "to the console" level="error"}}after'), { text: "after", problems: [] });
  } finally {
    Object.assign(console, saved);
  }
  assert.deepEqual(written, []);
  const many = templateData({
    payload: { things: Array.from({ length: 200_000 }, (_, i) => ({ kind: i % 2 ? "odd" : "even" })) },
  });
  assert.equal(
    renderTemplate('{{#each (groupBy things "kind")}}{{key}}={{items.length}} {{/each}}', many, {
      limits: { timeoutMs: 60_000, maxBytes: 1024 },
    }).text,
    "even=100000 odd=100000 ",
  );
});
