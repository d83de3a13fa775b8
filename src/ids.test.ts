import assert from "node:assert/strict";
import { test } from "node:test";
import { isObjectId, newObjectId } from "./ids.ts";

test("object ids of one second are unique and consecutive, and later seconds sort after", () => {
  const at = Date.UTC(2026, 10, 29, 9, 0, 0);
  const ids = Array.from({ length: 1000 }, () => newObjectId(at));
  assert.ok(ids.every(isObjectId));
  assert.equal(new Set(ids).size, ids.length);
  // One prefix for the second and the process; the counter is what changes.
  assert.equal(new Set(ids.map((id) => id.slice(0, 18))).size, 1);
  const steps = ids
    .slice(1)
    .map(
      (id, i) =>
        (parseInt(id.slice(18), 16) - parseInt((ids[i] ?? "").slice(18), 16) + 0x1000000) % 0x1000000,
    );
  assert.deepEqual(new Set(steps), new Set([1]));
  const later = newObjectId(at + 1000);
  assert.ok(
    ids.every((id) => id < later),
    "an id of a later second sorts after every id of an earlier one",
  );
  assert.equal(later.slice(0, 8), (at / 1000 + 1).toString(16));
});
