import assert from "node:assert/strict";
import { test } from "node:test";
import { isObjectId, newObjectId, newTransactionId } from "./ids.ts";

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

test("newTransactionId: a UUID of version 7 that leads with its time, so later ids sort after earlier ones", () => {
  const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const at = Date.UTC(2026, 10, 29, 18, 45, 0, 123);
  const ids = Array.from({ length: 1000 }, () => newTransactionId(at));
  for (const id of ids) {
    assert.match(id, V7);
    assert.equal(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at, "the first 48 bits are the time");
  }
  assert.equal(new Set(ids).size, ids.length, "the rest is random");
  const later = newTransactionId(at + 1);
  assert.ok(
    ids.every((id) => id < later),
    "a later millisecond sorts after",
  );
  // A clock at the epoch still gives the full width.
  assert.match(newTransactionId(0), /^00000000-0000-7/);
});
