import assert from "node:assert/strict";
import { test } from "node:test";
import { runsTogether } from "./accept.ts";

// How a bulk call's events are grouped to be accepted side by side (acceptBulk): in order, and never
// two events of one run naming the same subscriber or transactionId, nor an event that cannot join a
// batch (a topic, an actor, a tenant object) with others.
test("a bulk call's events in runs: order kept, a repeated subscriber or transactionId and events that cannot join start new runs", () => {
  const e = (to: unknown, extra: Record<string, unknown> = {}) => ({ name: "w", to, ...extra }) as never;
  const runs = runsTogether(
    [
      e("a"),
      e("b"),
      e({ subscriberId: "c", firstName: "C" }),
      e({ subscriberId: "a", firstName: "A" }), // a again: a new run
      e("d", { transactionId: "t1" }),
      e("e", { transactionId: "t1" }), // t1 again: a new run
      e({ type: "Topic", topicKey: "k" }), // a topic: alone
      e("f", { actor: "x" }), // an actor: alone
      e("g"),
      e("h"),
    ],
    false,
  );
  assert.deepEqual(runs, [[0, 1, 2], [3, 4], [5], [6], [7], [8, 9]]);
  assert.deepEqual(runsTogether([e("a"), e("b")], true), [[0], [1]]);
  const many = Array.from({ length: 130 }, (_, i) => e(`s${i}`));
  assert.deepEqual(
    runsTogether(many, false).map((run) => run.length),
    [64, 64, 2],
  );
});
