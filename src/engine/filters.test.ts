import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { Filter, FilterChild, FilterOperator } from "../workflows/domain.ts";
import { FILTER_ON, FILTER_OPERATORS } from "../workflows/enums.ts";
import {
  compare,
  evaluateCondition,
  type FilterContext,
  filteredReason,
  readPath,
  stepPasses,
} from "./filters.ts";

const NOW = Date.parse("2026-01-01T12:00:00.000Z");

const context: FilterContext = {
  payload: {
    count: 5,
    price: 19.99,
    zero: 0,
    big: 10n,
    plan: "pro",
    numericText: "10",
    vip: true,
    off: false,
    nothing: null,
    orderedAt: "2025-06-15T10:00:00.000Z",
    day: "2025-06-15",
    localTime: "2025-06-15T10:00:00",
    stamp: new Date("2025-06-15T10:00:00.000Z"),
    tags: ["beta", "vip", "early"],
    counts: [1, 2, 3],
    flags: [true],
    empty: [],
    title: "Your Order Has Shipped",
    user: { plan: "team", address: { city: "Lyon" }, seats: 12 },
    items: [{ name: "one" }, { name: "two" }],
  },
  subscriber: {
    subscriberId: "s-1",
    email: "ada@example.test",
    locale: "fr",
    data: { tier: "gold", nested: { score: 80 } },
  },
  tenant: { identifier: "acme", data: { region: "eu" } },
  now: NOW,
};

const child = (
  field: string,
  operator: FilterOperator,
  value: string,
  on: FilterChild["on"] = "payload",
) => ({
  field,
  operator,
  value,
  on,
});

type Case = [field: string, operator: FilterOperator, value: string, passed: boolean];

/** Runs a table of conditions on the payload (unless `on` says otherwise) and checks each verdict. */
function table(cases: Case[], on: FilterChild["on"] = "payload", ctx: FilterContext = context) {
  for (const [field, operator, value, passed] of cases) {
    const outcome = evaluateCondition(child(field, operator, value, on), ctx);
    assert.equal(outcome.passed, passed, `${on}.${field} ${operator} "${value}" (actual ${outcome.actual})`);
  }
}

test("readPath: dot paths, list indexes, own properties only", () => {
  const source = { a: { b: [{ c: 1 }] }, "": 2, n: null };
  const cases: [string, unknown][] = [
    ["a.b.0.c", 1],
    ["a.b[0].c", 1],
    ["a.b.1.c", undefined],
    ["a.missing.deeper", undefined],
    ["n.x", undefined],
    ["", undefined],
    ["a..b", undefined],
    ["constructor", undefined],
    ["__proto__", undefined],
    ["a.constructor.name", undefined],
    ["a.b.length", 1],
  ];
  for (const [path, expected] of cases) assert.equal(readPath(source, path), expected, path);
  assert.equal(readPath(undefined, "a"), undefined);
  assert.equal(readPath("text", "length"), undefined);
});

test("numbers: the text is read as a number; every comparison", () => {
  table([
    ["count", "EQUAL", "5", true],
    ["count", "EQUAL", " 5 ", true],
    ["count", "EQUAL", "5.0", true],
    ["count", "EQUAL", "6", false],
    ["count", "EQUAL", "five", false],
    ["count", "NOT_EQUAL", "6", true],
    ["count", "NOT_EQUAL", "5", false],
    ["count", "NOT_EQUAL", "five", true],
    ["count", "LARGER", "4", true],
    ["count", "LARGER", "5", false],
    ["count", "LARGER", "abc", false],
    ["count", "SMALLER", "6", true],
    ["count", "SMALLER", "5", false],
    ["count", "SMALLER", "abc", false],
    ["count", "LARGER_EQUAL", "5", true],
    ["count", "LARGER_EQUAL", "6", false],
    ["count", "SMALLER_EQUAL", "5", true],
    ["count", "SMALLER_EQUAL", "4", false],
    ["price", "LARGER", "19.9", true],
    ["price", "SMALLER", "2e1", true],
    ["zero", "EQUAL", "0", true],
    ["zero", "EQUAL", "", false],
    ["big", "EQUAL", "10", true],
    ["count", "BETWEEN", "1,5", true],
    ["count", "BETWEEN", "5, 9", true],
    ["count", "BETWEEN", "6,9", false],
    ["count", "BETWEEN", "9,1", false],
    ["count", "BETWEEN", "1", false],
    ["count", "BETWEEN", "1,2,3", false],
    ["count", "NOT_BETWEEN", "6,9", true],
    ["count", "NOT_BETWEEN", "1,9", false],
    ["count", "IN", "1, 5 ,9", true],
    ["count", "IN", "1,9", false],
    ["count", "NOT_IN", "1,9", true],
    ["count", "NOT_IN", "5", false],
    ["count", "LIKE", "5", true],
    ["price", "LIKE", ".99", true],
    ["count", "NOT_LIKE", "7", true],
    ["count", "IS_DEFINED", "", true],
    ["zero", "IS_DEFINED", "", true],
  ]);
});

test("text: exact, case-sensitive; ordered as text unless both sides are numbers", () => {
  table([
    ["plan", "EQUAL", "pro", true],
    ["plan", "EQUAL", "Pro", false],
    ["plan", "EQUAL", "pro ", false],
    ["plan", "NOT_EQUAL", "team", true],
    ["plan", "LARGER", "basic", true],
    ["plan", "SMALLER", "basic", false],
    ["plan", "SMALLER_EQUAL", "pro", true],
    ["numericText", "LARGER", "9", true],
    ["numericText", "EQUAL", "10", true],
    ["numericText", "EQUAL", "10.0", false],
    ["numericText", "BETWEEN", "2,20", true],
    ["plan", "BETWEEN", "a,z", true],
    ["plan", "IN", "basic, pro,team", true],
    ["plan", "IN", "basic,team", false],
    ["plan", "IN", "", false],
    ["plan", "IN", "pr", false],
    ["plan", "NOT_IN", "basic,team", true],
    ["plan", "ANY_IN", "pro,team", true],
    ["plan", "ALL_IN", "pro,team", true],
    ["plan", "ALL_IN", "team", false],
    ["title", "LIKE", "Order", true],
    ["title", "LIKE", "order", false],
    ["title", "LIKE", "", true],
    ["title", "LIKE", "Shipped!", false],
    ["title", "NOT_LIKE", "order", true],
    ["title", "NOT_LIKE", "Order", false],
    ["plan", "IS_DEFINED", "", true],
  ]);
});

test("booleans: true and false, any case; other text does not match", () => {
  table([
    ["vip", "EQUAL", "true", true],
    ["vip", "EQUAL", "TRUE", true],
    ["vip", "EQUAL", " true ", true],
    ["vip", "EQUAL", "false", false],
    ["vip", "EQUAL", "1", false],
    ["vip", "NOT_EQUAL", "false", true],
    ["vip", "NOT_EQUAL", "true", false],
    ["off", "EQUAL", "false", true],
    ["off", "IS_DEFINED", "", true],
    ["vip", "LARGER", "false", false],
    ["vip", "SMALLER", "true", false],
    ["vip", "IN", "true,false", true],
    ["off", "IN", "true", false],
    ["flags", "ANY_IN", "true", true],
    ["vip", "LIKE", "ru", true],
  ]);
});

test("dates: ISO text on both sides is compared as instants; a time without a zone is UTC", () => {
  table([
    ["orderedAt", "EQUAL", "2025-06-15T10:00:00Z", true],
    ["orderedAt", "EQUAL", "2025-06-15T12:00:00+02:00", true],
    ["orderedAt", "EQUAL", "2025-06-15T10:00:00", true],
    ["orderedAt", "EQUAL", "2025-06-15", false],
    ["orderedAt", "LARGER", "2025-06-15", true],
    ["orderedAt", "SMALLER", "2025-06-16", true],
    ["orderedAt", "LARGER", "2025-06-15T10:00:00.001Z", false],
    ["orderedAt", "LARGER_EQUAL", "2025-06-15T10:00:00Z", true],
    ["orderedAt", "SMALLER_EQUAL", "2025-06-15T09:59:59Z", false],
    ["orderedAt", "BETWEEN", "2025-06-01,2025-07-01", true],
    ["orderedAt", "BETWEEN", "2025-07-01,2025-08-01", false],
    ["orderedAt", "NOT_BETWEEN", "2025-07-01,2025-08-01", true],
    ["orderedAt", "IN", "2025-01-01, 2025-06-15T10:00:00Z", true],
    ["day", "EQUAL", "2025-06-15T00:00:00Z", true],
    ["day", "SMALLER", "2025-06-15T00:00:01Z", true],
    ["localTime", "EQUAL", "2025-06-15T10:00:00Z", true],
    ["stamp", "EQUAL", "2025-06-15T10:00:00Z", true],
    ["stamp", "LARGER", "2025-01-01", true],
    // A date compared with text that is no date: compared as text.
    ["orderedAt", "EQUAL", "yesterday", false],
    ["orderedAt", "LIKE", "2025-06", true],
    ["orderedAt", "SMALLER", "3000", true],
  ]);
});

test("lists: IN and ANY_IN share an item, ALL_IN has every value in the list, EQUAL never matches", () => {
  table([
    ["tags", "IN", "vip, gold", true],
    ["tags", "IN", "gold,silver", false],
    ["tags", "NOT_IN", "gold,silver", true],
    ["tags", "NOT_IN", "vip", false],
    ["tags", "ANY_IN", "gold, early", true],
    ["tags", "ANY_IN", "gold", false],
    ["tags", "ALL_IN", "beta,vip,early,gold", true],
    ["tags", "ALL_IN", "beta, vip", false],
    ["tags", "ALL_IN", "", false],
    ["empty", "ALL_IN", "a", false],
    ["empty", "ANY_IN", "a", false],
    ["counts", "ANY_IN", "3,4", true],
    ["counts", "ALL_IN", "1,2,3", true],
    ["counts", "ALL_IN", "1,2", false],
    ["tags", "LIKE", "arl", true],
    ["tags", "NOT_LIKE", "zzz", true],
    ["tags", "EQUAL", "vip", false],
    ["tags", "NOT_EQUAL", "vip", true],
    ["tags", "IS_DEFINED", "", true],
    ["empty", "IS_DEFINED", "", true],
    ["items", "LARGER", "1", false],
    ["user", "EQUAL", "team", false],
  ]);
  const listNote = evaluateCondition(child("tags", "EQUAL", "vip"), context);
  assert.match(listNote.note ?? "", /use IN, ANY_IN or ALL_IN/);
  assert.equal(listNote.actual, '["beta","vip","early"]');
});

test("missing and null fields: never throw; positive operators fail, their NOT_ complements pass", () => {
  const missingCases = (field: string): Case[] => [
    [field, "EQUAL", "x", false],
    [field, "NOT_EQUAL", "x", true],
    [field, "LARGER", "1", false],
    [field, "SMALLER", "1", false],
    [field, "LARGER_EQUAL", "1", false],
    [field, "SMALLER_EQUAL", "1", false],
    [field, "IN", "a,b", false],
    [field, "NOT_IN", "a,b", true],
    [field, "ANY_IN", "a", false],
    [field, "ALL_IN", "a", false],
    [field, "BETWEEN", "1,2", false],
    [field, "NOT_BETWEEN", "1,2", true],
    [field, "LIKE", "a", false],
    [field, "NOT_LIKE", "a", true],
    [field, "IS_DEFINED", "", false],
  ];
  table(missingCases("absent"));
  table(missingCases("nothing"));
  table(missingCases("user.missing.deeper"));
  table(missingCases("plan.length"));
  table(missingCases("constructor"));
  table(missingCases(""));
  table(missingCases("count"), "payload", { now: NOW });
  assert.equal(evaluateCondition(child("nothing", "EQUAL", "x"), context).actual, "(missing)");
});

test("nested paths, and the subscriber and tenant as sources", () => {
  table([
    ["user.plan", "EQUAL", "team", true],
    ["user.address.city", "IN", "Paris, Lyon", true],
    ["user.seats", "BETWEEN", "10,20", true],
    ["items.1.name", "EQUAL", "two", true],
    ["items[0].name", "EQUAL", "one", true],
  ]);
  table(
    [
      ["email", "LIKE", "@example.test", true],
      ["locale", "EQUAL", "fr", true],
      ["data.tier", "EQUAL", "gold", true],
      ["data.nested.score", "LARGER_EQUAL", "80", true],
      ["data.missing", "IS_DEFINED", "", false],
      ["plan", "EQUAL", "pro", false],
    ],
    "subscriber",
  );
  table(
    [
      ["identifier", "EQUAL", "acme", true],
      ["data.region", "NOT_IN", "us,apac", true],
    ],
    "tenant",
  );
  // Without a tenant the tenant's fields are missing.
  table([["identifier", "EQUAL", "acme", false]], "tenant", { ...context, tenant: undefined });
});

test("a condition's value may be a template, rendered with what the notification knows", () => {
  const ctx = { ...context, payload: { ...context.payload, limit: 3 }, step: { total_count: 4 } };
  table(
    [
      ["count", "LARGER", "{{payload.limit}}", true],
      ["plan", "EQUAL", "{{subscriber.data.tier}}", false],
      ["user.plan", "NOT_EQUAL", "{{subscriber.data.tier}}", true],
      ["plan", "IN", "basic,{{payload.plan}}", true],
      ["count", "LARGER", "{{step.total_count}}", true],
      ["count", "EQUAL", "{{payload.missing}}", false],
    ],
    "payload",
    ctx,
  );
  const outcome = evaluateCondition(child("count", "EQUAL", "{{unknownHelper x}}5"), ctx);
  assert.equal(outcome.expected, "5");
  assert.equal(outcome.passed, true);
  assert.match(outcome.note ?? "", /unknown helper/);
  // Judged on the event loop: a value that loops, or walks the data, is compared as written.
  const payload = { ...ctx.payload, a: Array.from({ length: 100 }, (_, i) => i) };
  for (const value of [
    "{{#each @root.payload.a}}{{#each @root.payload.a}}{{#each @root.payload.a}}x{{/each}}{{/each}}{{/each}}",
    "{{json payload}}",
  ]) {
    const looped = evaluateCondition(child("count", "EQUAL", value), { ...ctx, payload });
    assert.equal(looped.expected, value);
    assert.equal(looped.passed, false);
    assert.equal(looped.note, "a condition's value cannot loop or use json, sortBy, unique or groupBy");
  }
});

test("isOnline and isOnlineInLast read the subscriber's online status against the clock", () => {
  const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();
  const online = { ...context, subscriber: { isOnline: true, lastOnlineAt: at(5000) } };
  const offline = (minutesAgo: number) => ({
    ...context,
    subscriber: { isOnline: false, lastOnlineAt: at(minutesAgo) },
  });
  const never = { ...context, subscriber: { subscriberId: "old" } };
  const cases: [string, FilterContext, FilterChild, boolean][] = [
    ["online, value true", online, child("", "EQUAL", "true", "isOnline"), true],
    ["online, value empty means true", online, child("", "EQUAL", "", "isOnline"), true],
    ["online, value false", online, child("", "EQUAL", "false", "isOnline"), false],
    ["online, NOT_EQUAL true", online, child("", "NOT_EQUAL", "true", "isOnline"), false],
    ["offline, value false", offline(1), child("", "EQUAL", "false", "isOnline"), true],
    ["offline, value true", offline(1), child("", "EQUAL", "true", "isOnline"), false],
    ["no status at all, value true", never, child("", "EQUAL", "true", "isOnline"), false],
    ["no status at all, value false", never, child("", "EQUAL", "false", "isOnline"), false],
    ["value not a boolean", online, child("", "EQUAL", "yes", "isOnline"), false],
    [
      "online now is online in the last minute",
      online,
      child("", "EQUAL", "1 minutes", "isOnlineInLast"),
      true,
    ],
    [
      "seen 4 minutes ago, in the last 5",
      offline(4),
      child("", "EQUAL", "5 minutes", "isOnlineInLast"),
      true,
    ],
    [
      "seen 5 minutes ago, in the last 5",
      offline(5),
      child("", "EQUAL", "5 minutes", "isOnlineInLast"),
      true,
    ],
    [
      "seen 6 minutes ago, not in the last 5",
      offline(6),
      child("", "EQUAL", "5 minutes", "isOnlineInLast"),
      false,
    ],
    ["singular unit", offline(50), child("", "EQUAL", "1 hour", "isOnlineInLast"), true],
    ["unit written together", offline(61), child("", "EQUAL", "1hours", "isOnlineInLast"), false],
    ["no unit: days", offline(60 * 24 * 2), child("", "EQUAL", "3", "isOnlineInLast"), true],
    ["no unit: days, too long ago", offline(60 * 24 * 4), child("", "EQUAL", "3", "isOnlineInLast"), false],
    [
      "Novu's timeOperator when sent",
      offline(30),
      { ...child("", "EQUAL", "1", "isOnlineInLast"), timeOperator: "hours" } as FilterChild,
      true,
    ],
    [
      "last seen in the future (clock skew)",
      offline(-2),
      child("", "EQUAL", "1 minutes", "isOnlineInLast"),
      true,
    ],
    ["unknown unit", offline(1), child("", "EQUAL", "5 fortnights", "isOnlineInLast"), false],
    ["no amount", offline(1), child("", "EQUAL", "minutes", "isOnlineInLast"), false],
    ["no status at all", never, child("", "EQUAL", "5 minutes", "isOnlineInLast"), false],
    [
      "lastOnlineAt not a date",
      { ...context, subscriber: { isOnline: false, lastOnlineAt: "yesterday" } },
      child("", "EQUAL", "5 days", "isOnlineInLast"),
      false,
    ],
  ];
  for (const [label, ctx, condition, passed] of cases) {
    assert.equal(evaluateCondition(condition, ctx).passed, passed, label);
  }
  assert.match(
    evaluateCondition(child("", "EQUAL", "true", "isOnline"), never).note ?? "",
    /no online status/,
  );
});

test("previousStep: field names the step, value the state its message must be in", () => {
  const ctx: FilterContext = {
    ...context,
    previousSteps: { "step-a": { seen: true, read: false }, "step-b": { seen: false, read: false } },
  };
  const cases: [string, string, boolean][] = [
    ["step-a", "seen", true],
    ["step-a", "unseen", false],
    ["step-a", "read", false],
    ["step-a", "unread", true],
    ["step-b", " SEEN ", false],
    ["step-b", "unseen", true],
    ["step-c", "read", true],
    ["step-a", "opened", false],
    ["constructor", "read", true],
  ];
  for (const [field, value, passed] of cases) {
    assert.equal(
      evaluateCondition(child(field, "EQUAL", value, "previousStep"), ctx).passed,
      passed,
      `${field} ${value}`,
    );
  }
  assert.equal(evaluateCondition(child("step-a", "EQUAL", "read", "previousStep"), context).passed, true);
});

test("webhook: reads the response the caller fetched; without one its fields are missing", () => {
  table([["status", "EQUAL", "approved", true]], "webhook", { ...context, webhook: { status: "approved" } });
  const without = evaluateCondition(child("status", "EQUAL", "approved", "webhook"), context);
  assert.equal(without.passed, false);
  assert.match(without.note ?? "", /no webhook response/);
});

const filter = (value: "AND" | "OR", children: FilterChild[], isNegated = false): Filter => ({
  isNegated,
  type: "GROUP",
  value,
  children,
});
const yes = child("plan", "EQUAL", "pro");
const no = child("plan", "EQUAL", "basic");

test("filters: AND and OR within a filter, negation, OR across filters", () => {
  const cases: [string, Filter[], boolean][] = [
    ["no filters: the step runs", [], true],
    ["a filter without children holds", [filter("AND", [])], true],
    ["an OR filter without children holds", [filter("OR", [])], true],
    ["a negated filter without children never holds", [filter("AND", [], true)], false],
    ["AND, all hold", [filter("AND", [yes, yes])], true],
    ["AND, one fails", [filter("AND", [yes, no])], false],
    ["AND, one child that holds", [filter("AND", [yes])], true],
    ["OR, one holds", [filter("OR", [no, yes])], true],
    ["OR, none holds", [filter("OR", [no, no])], false],
    ["OR, one child that fails", [filter("OR", [no])], false],
    ["negated AND that holds", [filter("AND", [yes, yes], true)], false],
    ["negated AND that fails", [filter("AND", [yes, no], true)], true],
    ["negated OR that holds", [filter("OR", [no, yes], true)], false],
    ["negated OR that fails", [filter("OR", [no, no], true)], true],
    ["across filters: one of two holds", [filter("AND", [no]), filter("AND", [yes])], true],
    ["across filters: none holds", [filter("AND", [no]), filter("OR", [no, no])], false],
    ["across filters: a negated one holds", [filter("AND", [no]), filter("AND", [no], true)], true],
    [
      "mixed sources in one filter",
      [
        filter("AND", [
          child("count", "LARGER", "3"),
          child("data.tier", "EQUAL", "gold", "subscriber"),
          child("data.region", "EQUAL", "eu", "tenant"),
        ]),
      ],
      true,
    ],
  ];
  for (const [label, filters, passed] of cases) {
    const result = stepPasses(filters, context);
    assert.equal(result.passed, passed, label);
    assert.equal(result.filters.length, filters.length, label);
  }
  // Every child is judged, so the outcome explains itself.
  const explained = stepPasses([filter("OR", [yes, no])], context);
  assert.deepEqual(
    explained.filters[0]?.conditions.map((c) => [c.field, c.passed]),
    [
      ["plan", true],
      ["plan", false],
    ],
  );
});

test("filteredReason: says which conditions kept the step from running", () => {
  const result = stepPasses(
    [
      filter("AND", [child("plan", "EQUAL", "basic"), child("count", "LARGER", "1")]),
      filter("AND", [child("data.tier", "EQUAL", "gold", "subscriber")], true),
      filter("AND", [], true),
    ],
    context,
  );
  assert.equal(result.passed, false);
  assert.equal(
    filteredReason(result),
    'filtered: no filter passed; filter 1: payload.plan EQUAL "basic" was pro; ' +
      'filter 2 (negated): subscriber.data.tier EQUAL "gold" was gold; filter 3 (negated): no conditions',
  );
  const many = stepPasses(
    [
      filter(
        "AND",
        Array.from({ length: 8 }, (_, i) => child(`f${i}`, "EQUAL", "x")),
      ),
    ],
    context,
  );
  assert.match(filteredReason(many), /payload\.f4 EQUAL "x" was \(missing\) and 3 more$/);
  assert.match(filteredReason(stepPasses([], context)), /^not filtered/);
});

test("compare: every operator has a verdict for every kind of field, and never throws", () => {
  const fields: unknown[] = [
    undefined,
    null,
    0,
    -1.5,
    Number.NaN,
    7n,
    "",
    "text",
    "2025-01-01",
    true,
    [],
    [1, "a"],
    {},
  ];
  const values = ["", "x", "1", "1,2", "2025-01-01,2026-01-01", "true", ",,,", "{{", "NaN"];
  for (const operator of FILTER_OPERATORS) {
    for (const field of fields) {
      for (const value of values) {
        const verdict = compare(operator, field, value);
        assert.equal(typeof verdict.passed, "boolean");
      }
    }
  }
  // NaN has no order: not larger, not smaller, not between.
  assert.equal(compare("LARGER_EQUAL", Number.NaN, "1").passed, false);
  assert.equal(compare("SMALLER_EQUAL", Number.NaN, "1").passed, false);
});

test("stepPasses never throws, whatever the payload and the filters", () => {
  const childArb = fc.record({
    field: fc.oneof(fc.constantFrom("a", "a.b", "a.0", "__proto__", "constructor.name", ""), fc.string()),
    value: fc.oneof(
      fc.constantFrom("1", "true", "a,b", "2025-01-01", "{{a}}", "{{#if}}", "5 minutes"),
      fc.string(),
    ),
    operator: fc.constantFrom(...FILTER_OPERATORS),
    on: fc.constantFrom(...FILTER_ON),
  });
  const filterArb = fc.record({
    isNegated: fc.boolean(),
    type: fc.constant("GROUP" as const),
    value: fc.constantFrom("AND" as const, "OR" as const),
    children: fc.array(childArb, { maxLength: 4 }),
  });
  fc.assert(
    fc.property(
      fc.array(filterArb, { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
      (filters, payload, subscriber) => {
        const result = stepPasses(filters, { payload, subscriber, now: NOW });
        assert.equal(typeof result.passed, "boolean");
        assert.equal(typeof filteredReason(result), "string");
      },
    ),
    { numRuns: 300 },
  );
});
