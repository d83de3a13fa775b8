// The job-queue port's promises, on both backends: what the engine may count on whichever holds it.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { backends } from "../../../test/backends.ts";
import { poll } from "../../../test/poll.ts";
import { gate, type QueueFixture, queueFixture } from "../../../test/queue-helpers.ts";

for (const backend of backends) {
  describe(`job queue [${backend.name}]`, () => {
    let fx: QueueFixture;
    before(async () => {
      fx = await queueFixture(backend);
    });
    afterEach(() => fx.reset());
    after(() => fx?.destroy());

    test("a task added in a transaction that rolls back never runs; one that commits runs exactly once", async () => {
      const { store } = fx;
      const queue = await fx.open();
      const ran: unknown[] = [];
      await queue.start({ note: async (payload) => void ran.push(payload.name) });

      await assert.rejects(
        store.db.transaction().execute(async (trx) => {
          await queue.add(trx, [{ task: "note", payload: { name: "rolled back" } }]);
          throw new Error("the trigger failed after enqueueing");
        }),
        /the trigger failed/,
      );
      queue.wake();
      await store.db.transaction().execute(async (trx) => {
        await queue.add(trx, [{ task: "note", payload: { name: "committed" } }]);
      });
      queue.wake();

      await poll(
        () => ran.length,
        (n) => n > 0,
        { what: "the committed task to run" },
      );
      await fx.settled();
      // Idle, and the queue holds nothing: no task is left to run a second time.
      assert.equal(await fx.count(), 0, "a finished task leaves nothing behind");
      assert.deepEqual(ran, ["committed"]);
    });

    test("a key dedups while its task is pending, running included, and is free once it is done", async () => {
      const { store } = fx;
      const queue = await fx.open();
      const ran: number[] = [];
      const hold = gate();
      let entered = false;
      await queue.start({
        digest: async (payload) => {
          entered = true;
          await hold.opened;
          ran.push(payload.n as number);
        },
      });
      const add = (n: number) =>
        store.db
          .transaction()
          .execute((trx) => queue.add(trx, [{ task: "digest", payload: { n }, key: "k" }]));

      // Twice in one call, then again in another transaction: one task.
      await store.db.transaction().execute((trx) =>
        queue.add(trx, [
          { task: "digest", payload: { n: 1 }, key: "k" },
          { task: "digest", payload: { n: 2 }, key: "k" },
        ]),
      );
      await add(3);
      assert.equal(await fx.count(), 1);
      queue.wake();
      await poll(() => entered, Boolean, { what: "the task to start" });
      // While it runs, the key is still taken.
      await add(4);
      assert.equal(await fx.count(), 1);
      hold.open();
      await fx.settled();
      assert.deepEqual(ran, [1], "the first payload ran, once");

      // Done: the key is free again.
      await add(5);
      queue.wake();
      await poll(
        () => ran.length,
        (n) => n === 2,
        { what: "the re-added task to run" },
      );
      await fx.settled();
      assert.deepEqual(ran, [1, 5]);
      assert.equal(await fx.count(), 0);
    });

    test("stop() waits for a running task to finish", async () => {
      const { store } = fx;
      const queue = await fx.open();
      const stopCalled = gate();
      let entered = false;
      let finished = false;
      await queue.start({
        slow: async () => {
          entered = true;
          await stopCalled.opened;
          // The task goes on for a while after stop() was called: the work stop() must wait out
          // (what is tested), not a wait for an outcome.
          await new Promise((resolve) => setTimeout(resolve, 150));
          finished = true;
        },
      });
      await store.db.transaction().execute((trx) => queue.add(trx, [{ task: "slow", payload: {} }]));
      queue.wake();
      await poll(() => entered, Boolean, { what: "the task to start" });

      const stopping = queue.stop().then(() => finished);
      stopCalled.open();
      assert.equal(await stopping, true, "stop() returned while a task was running");
      assert.equal(await fx.count(), 0, "the finished task was recorded as done before stop() returned");
    });

    test("a worker started with no handlers takes no tasks", async () => {
      const { store } = fx;
      const queue = await fx.open();
      await queue.start({});
      await store.db.transaction().execute((trx) => queue.add(trx, [{ task: "later", payload: {} }]));
      queue.wake();
      assert.equal(await fx.count(), 1, "the task waits for a worker that knows it");
      // Shown by the worker that does know it: the task reaches it on its first attempt, so no
      // worker ran (and failed) it before.
      const knowing = await fx.open();
      const attempts: number[] = [];
      await knowing.start({ later: async (_payload, context) => void attempts.push(context.attempt) });
      knowing.wake();
      await poll(
        () => attempts,
        (a) => a.length > 0,
        { what: "the task to reach the worker that knows it" },
      );
      await fx.settled();
      assert.deepEqual(attempts, [1], "the task waited for a worker that knows it");
    });
  });
}
