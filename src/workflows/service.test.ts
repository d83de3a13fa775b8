import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { preferenceSettings, statusFor, workflowName, workflowRef } from "./service.ts";

// The workflow rules as plain functions: no database, no HTTP.
describe("workflow rules", () => {
  test("the status: active when sent, else the opposite of draft, else as it was; draft always its opposite", () => {
    // [what was sent, the current active (undefined: a new workflow), the active that results]
    const cases: [{ active?: boolean; draft?: boolean }, boolean | undefined, boolean][] = [
      [{}, undefined, false],
      [{}, true, true],
      [{}, false, false],
      [{ active: true }, undefined, true],
      [{ active: false }, true, false],
      [{ active: true }, false, true],
      [{ draft: true }, true, false],
      [{ draft: false }, undefined, true],
      [{ draft: false }, false, true],
      [{ draft: true }, undefined, false],
      // Both sent: active wins, even against a draft that says otherwise.
      [{ active: true, draft: true }, false, true],
      [{ active: false, draft: false }, true, false],
    ];
    for (const [sent, current, active] of cases) {
      assert.deepEqual(
        statusFor(sent, current),
        { active, draft: !active },
        `${JSON.stringify(sent)} on ${current}`,
      );
    }
  });

  test("a name is trimmed, 1–200 characters, without control characters", () => {
    const cases: [string, string | RegExp][] = [
      ["  Order shipped ", "Order shipped"],
      ["é".repeat(200), "é".repeat(200)],
      ["", /must not be empty/],
      ["   ", /must not be empty/],
      ["x".repeat(201), /at most 200/],
      ["a\u0007b", /control characters/],
    ];
    for (const [input, expected] of cases) {
      if (typeof expected === "string") assert.equal(workflowName(input), expected, JSON.stringify(input));
      else assert.throws(() => workflowName(input), expected, JSON.stringify(input));
    }
  });

  test("a path names a workflow by _id when it is an ObjectId, else by trigger identifier", () => {
    assert.deepEqual(workflowRef("65f0c2a1b2c3d4e5f6a7b8c9"), { id: "65f0c2a1b2c3d4e5f6a7b8c9" });
    assert.deepEqual(workflowRef("order-shipped"), { identifier: "order-shipped" });
    assert.deepEqual(workflowRef("65F0C2A1B2C3D4E5F6A7B8C9"), { identifier: "65F0C2A1B2C3D4E5F6A7B8C9" });
  });

  test("channel defaults: what was sent, else what the workflow had, else on", () => {
    assert.deepEqual(preferenceSettings(), { email: true, sms: true, in_app: true, chat: true, push: true });
    const base = { email: false, sms: true, in_app: false, chat: true, push: true };
    assert.deepEqual(preferenceSettings({ sms: false }, base), {
      email: false,
      sms: false,
      in_app: false,
      chat: true,
      push: true,
    });
    assert.deepEqual(preferenceSettings({ email: true }, base).email, true);
  });
});
