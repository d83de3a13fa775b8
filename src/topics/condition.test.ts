import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { conditionHolds, conditionProblem } from "./condition.ts";

// docs/engine.md, "Subscribers, topics and preferences": a subscription's condition is JSON Logic over {payload}.

const payload = { team: "core", priority: 3, tags: ["a", "b"], nested: { on: true }, empty: [] };

describe("a condition over the trigger's payload", () => {
  const cases: [string, unknown, boolean][] = [
    ["equality on a field", { "==": [{ var: "payload.team" }, "core"] }, true],
    ["equality that fails", { "==": [{ var: "payload.team" }, "web"] }, false],
    ["loose equality, as JSON Logic's ==", { "==": [{ var: "payload.priority" }, "3"] }, true],
    ["strict equality", { "===": [{ var: "payload.priority" }, "3"] }, false],
    ["inequality", { "!=": [{ var: "payload.team" }, "web"] }, true],
    ["a comparison", { ">=": [{ var: "payload.priority" }, 2] }, true],
    ["between (three arguments)", { "<": [1, { var: "payload.priority" }, 3] }, false],
    ["between, inclusive", { "<=": [1, { var: "payload.priority" }, 3] }, true],
    ["in a list", { in: ["b", { var: "payload.tags" }] }, true],
    ["in a string", { in: ["or", { var: "payload.team" }] }, true],
    ["a nested field", { "==": [{ var: "payload.nested.on" }, true] }, true],
    [
      "and",
      { and: [{ "==": [{ var: "payload.team" }, "core"] }, { ">": [{ var: "payload.priority" }, 5] }] },
      false,
    ],
    [
      "or",
      { or: [{ "==": [{ var: "payload.team" }, "web"] }, { ">": [{ var: "payload.priority" }, 2] }] },
      true,
    ],
    ["not", { "!": [{ var: "payload.missing" }] }, true],
    ["an empty list is false", { "!!": [{ var: "payload.empty" }] }, false],
    ["a missing field with a default", { "==": [{ var: ["payload.missing", "x"] }, "x"] }, true],
    ["if", { if: [{ var: "payload.nested.on" }, true, false] }, true],
    ["a result that is not true is false (as Novu)", { var: "payload.team" }, false],
    ["a literal true holds", true, true],
    ["the prototype is no field", { "!!": [{ var: "payload.constructor" }] }, false],
  ];
  for (const [name, rule, holds] of cases) {
    test(name, () => {
      assert.equal(conditionProblem(rule), undefined);
      assert.equal(conditionHolds(rule, payload), holds);
    });
  }
});

describe("conditions refused when set", () => {
  const cases: [string, unknown, RegExp][] = [
    ["an unknown operator", { regex: ["a", "b"] }, /operator "regex"/],
    ["an object with two operators", { "==": [1, 1], "!=": [1, 2] }, /exactly one operator/],
    [
      "an unknown operator deep inside",
      { and: [{ "==": [1, 1] }, { method: ["x", "y"] }] },
      /operator "method"/,
    ],
    ["a rule nested too deeply", JSON.parse(`${'{"!":['.repeat(20)}true${"]}".repeat(20)}`), /nest at most/],
    ["a rule too large", { in: ["x", "y".repeat(5000)] }, /at most 4096 bytes/],
  ];
  for (const [name, rule, problem] of cases) {
    test(name, () => assert.match(conditionProblem(rule) ?? "", problem));
  }
});
