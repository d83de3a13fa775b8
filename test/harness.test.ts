import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { forEachBackend } from "./harness.ts";

// The harness itself: what engine tests will lean on to move time.

const START = Date.UTC(2026, 5, 1, 12);

forEachBackend(
  "test harness: a clock of the test's own",
  (ctx) => {
    test("the app runs on the clock the suite was given, and moves when the test moves it", async () => {
      assert.ok(ctx.clock instanceof ManualClock);
      assert.equal(ctx.app.clock, ctx.clock);
      assert.equal(ctx.app.clock.now(), START);
      const fired: number[] = [];
      ctx.app.clock.at(START + 60_000, () => fired.push(ctx.clock.now()));
      ctx.clock.advance(59_999);
      assert.deepEqual(fired, []);
      ctx.clock.advance(1);
      assert.deepEqual(fired, [START + 60_000]);
      assert.equal(ctx.app.clock.now(), START + 60_000);
    });

    test("a second connection sees what the app wrote", async () => {
      const { dev } = await ctx.tenant();
      const other = await ctx.connect();
      const row = await other.db
        .selectFrom("environments")
        .select("id")
        .where("id", "=", dev.environmentId)
        .executeTakeFirst();
      assert.deepEqual(row, { id: dev.environmentId });
    });
  },
  { clock: () => new ManualClock(START) },
);

forEachBackend("test harness: the system clock by default", (ctx) => {
  test("without a clock of its own, the app reads the wall clock", async () => {
    const before = Date.now();
    const now = ctx.clock.now();
    assert.ok(now >= before && now <= Date.now(), `${now} is not the wall clock`);
    assert.equal(ctx.app.clock, ctx.clock);
  });
});
