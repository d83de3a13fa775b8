import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isoNow, ManualClock, systemClock } from "./clock.ts";

describe("ManualClock", () => {
  test("reads the time it was given and moves only when told", () => {
    const clock = new ManualClock(Date.UTC(2026, 4, 1));
    assert.equal(isoNow(clock), "2026-05-01T00:00:00.000Z");
    clock.advance(1500);
    assert.equal(isoNow(clock), "2026-05-01T00:00:01.500Z");
    assert.throws(() => clock.advance(-1), RangeError);
    assert.throws(() => clock.set(Date.UTC(2026, 0, 1)), RangeError);
  });

  test("fires due timers in time order, each seeing its own moment, and never early", () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    clock.at(3000, () => seen.push(`c@${clock.now()}`));
    clock.at(1000, () => seen.push(`a@${clock.now()}`));
    clock.at(2000, () => seen.push(`b@${clock.now()}`));
    clock.advance(999);
    assert.deepEqual(seen, []);
    clock.advance(1501);
    assert.deepEqual(seen, ["a@1000", "b@2000"]);
    assert.equal(clock.now(), 2500);
    assert.equal(clock.pending, 1);
    clock.advance(10_000);
    assert.deepEqual(seen, ["a@1000", "b@2000", "c@3000"]);
    assert.equal(clock.pending, 0);
  });

  test("a timer armed by a timer fires in the same advance when it is due by then", () => {
    const clock = new ManualClock(0);
    const seen: number[] = [];
    clock.at(100, () => {
      seen.push(clock.now());
      clock.at(200, () => seen.push(clock.now()));
    });
    clock.advance(300);
    assert.deepEqual(seen, [100, 200]);
  });

  test("a cancelled timer never fires; a timer already due fires without an advance", async () => {
    const clock = new ManualClock(5000);
    let cancelledFired = false;
    const cancel = clock.at(6000, () => {
      cancelledFired = true;
    });
    cancel();
    clock.advance(5000);
    assert.equal(cancelledFired, false);
    const fired = await new Promise<number>((resolve) => clock.at(1, () => resolve(clock.now())));
    assert.equal(fired, 10_000);
  });

  test("settled() waits for the work fired timers returned, work they set off meanwhile included", async () => {
    const clock = new ManualClock(0);
    const done: string[] = [];
    const step = (name: string) =>
      new Promise<void>((resolve) =>
        setImmediate(() => {
          done.push(name);
          resolve();
        }),
      );
    clock.at(100, () => step("first").then(() => clock.at(0, () => step("armed by the first"))));
    clock.at(100, () => void done.push("no promise"));
    clock.at(100, () => Promise.reject(new Error("handled by the clock: settled() still resolves")));
    assert.equal(await clock.settled(), 0, "nothing fired yet");
    clock.advance(100);
    assert.equal(await clock.settled(), 3);
    assert.deepEqual(done, ["no promise", "first", "armed by the first"]);
    assert.equal(clock.started, 3);
  });
});

// The system clock's timers never keep a process alive (by design); these tests hold it open with a
// timer of their own while they wait, or the test runner would see the event loop empty mid-test.
async function keptAlive<T>(wait: Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => {}, 1000);
  try {
    return await wait;
  } finally {
    clearInterval(keepAlive);
  }
}

describe("systemClock", () => {
  test("reads the wall clock and fires a timer once its moment has passed", async () => {
    const before = Date.now();
    assert.ok(Math.abs(systemClock.now() - before) < 1000);
    const at = Date.now() + 30;
    const firedAt = await keptAlive(
      new Promise<number>((resolve) => systemClock.at(at, () => resolve(Date.now()))),
    );
    assert.ok(firedAt >= at, `fired ${at - firedAt} ms early`);
  });

  test("a cancelled timer never fires", async () => {
    let fired = false;
    const cancel = systemClock.at(Date.now() + 20, () => {
      fired = true;
    });
    cancel();
    // A timer of the same clock for a later moment has fired: the cancelled one's moment has passed.
    await keptAlive(new Promise((resolve) => systemClock.at(Date.now() + 40, () => resolve(undefined))));
    assert.equal(fired, false);
  });
});
