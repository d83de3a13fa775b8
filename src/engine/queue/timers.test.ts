// Timers, not polling: a task added for a future moment starts at it, never before, on both
// backends (graphile-worker's poll is set to a minute here, so only the queue's own wake-up can start
// the tasks within the bound), and tasks that were waiting before the queue started (a restart) are
// timed too. The bound here proves "timed, not polled" on a machine of any load; how close to its
// moment a timer fires (the 100 ms target) is measured by `npm run bench` (bench/timers.ts), as
// every speed target is, not asserted by a test.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { backends } from "../../../test/backends.ts";
import { poll } from "../../../test/poll.ts";
import { type QueueFixture, queueFixture } from "../../../test/queue-helpers.ts";
import { systemClock } from "../../clock.ts";

const LATE_MS = 1_000;

/**
 * How late a bare timer of this process fires at `at`: what the machine itself adds (a busy machine
 * runs a process late), which the queue cannot help and is not judged on.
 */
function bareTimer(at: number): Promise<number> {
  return new Promise((resolve) => setTimeout(() => resolve(Date.now() - at), Math.max(0, at - Date.now())));
}

for (const backend of backends) {
  describe(`queue timers [${backend.name}]`, () => {
    let fx: QueueFixture;
    before(async () => {
      fx = await queueFixture(backend, { clock: systemClock });
    });
    afterEach(() => fx.reset());
    after(() => fx?.destroy());

    /** A started queue that records when each task started, against the moment it asked for. */
    async function timedQueue() {
      const queue = await fx.open({ pollIntervalMs: 60_000 });
      const lateness: number[] = [];
      await queue.start({
        timed: async (payload) => void lateness.push(Date.now() - Number(payload.at)),
      });
      return { queue, lateness };
    }

    const addAt = (queue: Awaited<ReturnType<typeof timedQueue>>["queue"], times: number[]) =>
      fx.store.db.transaction().execute((trx) =>
        queue.add(
          trx,
          times.map((at) => ({ task: "timed", payload: { at }, runAt: at })),
        ),
      );

    test("idle: each future task starts at its moment (timed, not polled), never before it", async () => {
      const { queue, lateness } = await timedQueue();
      // Let the worker settle into idleness first.
      await fx.settled();
      const now = Date.now();
      const times = [now + 150, now + 300, now + 450, now + 600, now + 750];
      await addAt(queue, times);
      queue.wake();
      const machine = await Promise.all(times.map(bareTimer));
      await poll(
        () => lateness.length,
        (n) => n === 5,
        { what: "the five tasks to run", limitMs: 3_000 },
      );
      lateness.forEach((late, i) => {
        assert.ok(late >= 0, `a task ran ${-late} ms early`);
        const own = late - (machine[i] ?? 0);
        assert.ok(
          own < LATE_MS,
          `a task ran ${late} ms late, ${own} ms later than a bare timer (${JSON.stringify({ lateness, machine })})`,
        );
      });
    });

    test("tasks waiting before the queue started are timed by it (a restart), each at its own moment; overdue ones run at once", async () => {
      const before = await fx.open({ pollIntervalMs: 60_000 });
      const now = Date.now();
      // Several moments close together: one look at the table times them all.
      const waiting = [now + 400, now + 450, now + 500, now + 550];
      await addAt(before, [now - 1_000, ...waiting]);
      const machine = Promise.all(waiting.map(bareTimer));
      // The process that added them goes away before they are due.
      await before.stop();
      const { lateness } = await timedQueue();
      const startedAt = Date.now();
      await poll(
        () => lateness.length,
        (n) => n === 1 + waiting.length,
        { what: "every task to run", limitMs: 3_000 },
      );
      // Tasks start in the order of their moments; the overdue one first.
      const [overdue, ...onTime] = lateness as [number, ...number[]];
      // The overdue task ran at (now - 1 s) + overdue: at once after the new queue started.
      const afterStart = now - 1_000 + overdue - startedAt;
      assert.ok(
        overdue >= 1_000 && afterStart < LATE_MS,
        `the overdue task ran ${afterStart} ms after the queue started`,
      );
      const bare = await machine;
      onTime.forEach((late, i) => {
        const own = late - (bare[i] ?? 0);
        assert.ok(
          late >= 0 && own < LATE_MS,
          `a waiting task ran ${late} ms late (a bare timer ${bare[i]}): ${JSON.stringify({ onTime, bare })}`,
        );
      });
    });
  });
}
