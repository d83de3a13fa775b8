import assert from "node:assert/strict";
import { test } from "node:test";
import { groupName } from "./service.ts";

// The naming rules of contract part 6, as a plain function.
test("a group name is trimmed and compared trimmed, NFC-normalised and lower-cased", () => {
  assert.deepEqual(groupName("  Marketing "), { name: "Marketing", key: "marketing" });
  // "É" composed and decomposed are one name.
  assert.equal(groupName("\u00c9t\u00e9").key, groupName("E\u0301te\u0301").key);
  const refused: [string, RegExp][] = [
    ["", /must not be empty/],
    [" \t ", /must not be empty/],
    ["x".repeat(101), /at most 100/],
    ["a\u0000b", /control or invisible/],
    ["a\u200bb", /control or invisible/],
    ["a\ud800b", /valid Unicode/],
  ];
  for (const [input, expected] of refused)
    assert.throws(() => groupName(input), expected, JSON.stringify(input));
});
