// The engine's durability under SIGKILL (docs/engine.md, "Triggering and the acknowledgement" and "Where the
// work runs"): a real server (API and worker in one process) takes concurrent triggers, each with its own
// transactionId, and is killed mid-load, a few times, on each backend. After each restart the worker must
// drain on its own (bounded), and then every acknowledged trigger has exactly one in-app message in its
// subscriber's feed, no transactionId has two, and no message exists that nobody triggered (a trigger cut off
// before its answer may have committed, or not: 0 or 1 message). Half the triggers run a lone in-app step,
// which the trigger's own transaction delivers (a kill before the commit leaves no message, after it the
// message is there once); half run it behind a throttle, through the queue and the worker. The
// senders' triggers arrive at once, so the process acknowledges many of them together, in one
// transaction (trigger-batch.ts): a kill cuts such a batch too, and each of its triggers is then
// there once or not at all.
//
// On PostgreSQL the killed process's graphile-worker jobs stay locked (graphile-worker's lock lasts
// 4 hours); the restarted worker finds the dead workers by their stale heartbeats and unlocks their
// jobs (graphile-queue.ts). The heartbeat timings are shortened here, so that takes seconds.
// Jobs the kill left in `running` must run again and complete (run-job.ts claims `running` too).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import {
  allMessages,
  EngineProbe,
  feedTransactions,
  inAppWorkflow,
  makeSubscribers,
  tally,
} from "./engine-processes.ts";
import { poll } from "./poll.ts";
import {
  call,
  forEachProcessBackend,
  type ServerProcess,
  seedOrganization,
  stopServer,
} from "./processes.ts";

// Two kills: the second lands on a database the first restart recovered, which is what a third
// would check again, at a third of the file's time.
const CYCLES = 2;
const SUBSCRIBERS = 8;
const SENDERS = 16;
/** How long a restarted worker may take to finish everything (a safety net, not a timing claim). */
const DRAIN_LIMIT_MS = 30_000;

forEachProcessBackend("engine: SIGKILL under concurrent triggers", (suite) => {
  const backend = suite.backend;
  test(`every acknowledged trigger delivers exactly one in-app message across ${CYCLES} SIGKILLs`, async (t) => {
    const started = Date.now();
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    const env = {
      ...db.env,
      RATE_LIMIT_RPS: "0",
      // The crashed-worker recovery (PostgreSQL), shortened: a worker is presumed dead 2 s after
      // its last heartbeat; beats and sweeps every 250 ms.
      WORKER_HEARTBEAT_MS: "250",
      WORKER_DEAD_AFTER_MS: "2000",
    };
    const probe = new EngineProbe(db);
    t.after(() => probe.close());
    let server: ServerProcess = await suite.start(env);
    const key = seed.apiKey;
    // Half the triggers are delivered in their own acknowledgement (the kill cuts the trigger's
    // transaction), half through the queue (the kill cuts the worker's tasks).
    const names = [
      await inAppWorkflow(server, key, seed.generalGroupId, "Crash in-app"),
      await inAppWorkflow(server, key, seed.generalGroupId, "Crash in-app, queued", "queue"),
    ] as const;
    const subscribers = await makeSubscribers(
      server,
      key,
      SUBSCRIBERS,
      `crash-${randomBytes(3).toString("hex")}`,
    );

    /** Every trigger sent: transactionId -> subscriberId. */
    const sent = new Map<string, string>();
    const acked = new Set<string>();
    const unexpected: string[] = [];
    let totalLeftRunning = 0;

    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const live = server;
      let ackedThisCycle = 0;
      let killed = false;
      const target = 60 + Math.floor(Math.random() * 90);
      const sender = async (s: number) => {
        for (let n = 0; !killed; n++) {
          const tx = `c${cycle}-s${s}-n${n}-${randomBytes(4).toString("hex")}`;
          const subscriberId = subscribers[(s + n) % SUBSCRIBERS] as string;
          sent.set(tx, subscriberId);
          let res: Awaited<ReturnType<typeof call>>;
          try {
            res = await call(live, "POST", "/v1/events/trigger", key, {
              name: names[n % 2],
              to: subscriberId,
              payload: { tx },
              transactionId: tx,
            });
          } catch {
            return; // the process is gone: this one may or may not have committed
          }
          if (res.status !== 201 || res.json().data.status !== "processed") {
            unexpected.push(`trigger: ${res.status} ${res.text}`);
            return;
          }
          assert.equal(res.json().data.transactionId, tx);
          acked.add(tx);
          ackedThisCycle++;
        }
      };
      const senders = Array.from({ length: SENDERS }, (_, s) => sender(s));
      // The kill comes once `target` triggers are acknowledged (in 30 s at most: asserted below, after
      // the kill, so the process is gone whatever happens).
      await poll(
        () => ackedThisCycle,
        (n) => n >= target || unexpected.length > 0,
        {
          what: `${target} acknowledged triggers`,
          limitMs: 30_000,
          everyMs: 2,
        },
      ).catch(() => {});
      live.child.kill("SIGKILL");
      killed = true;
      const exit = await live.exited;
      await Promise.all(senders);
      assert.deepEqual(unexpected, [], "every trigger before the kill was acknowledged");
      assert.equal(exit.signal, "SIGKILL");
      assert.ok(ackedThisCycle >= target, `only ${ackedThisCycle} triggers acknowledged in 30 s`);

      // What the kill cut short: jobs claimed and not finished, tasks still locked.
      const leftRunning = (await probe.jobsIn("running")).map((j) => j.id);
      const atKill = await probe.progress();
      totalLeftRunning += leftRunning.length;

      server = await suite.start(env);
      const drainMs = await probe.drained(DRAIN_LIMIT_MS);

      // The restarted worker handed back exactly the tasks the dead one held: SQLite releases every
      // claim at start; PostgreSQL's sweep unlocks the jobs of workers whose heartbeat went stale.
      const recoveryLine =
        backend === "sqlite"
          ? "job queue: tasks cut short by a worker that died run again"
          : "job queue: workers without a heartbeat are presumed dead; the tasks they held run again";
      const handedBackNow = () =>
        server
          .logs()
          .filter((line) => line.msg === recoveryLine)
          .reduce((sum, line) => sum + Number(line.tasks), 0);
      // (The log line may reach us a moment after the work it announced.)
      const handedBack = await poll(handedBackNow, (n) => n >= atKill.lockedTasks, {
        what: `the log to tell of ${atKill.lockedTasks} tasks handed back`,
        limitMs: 5_000,
        everyMs: 50,
      });
      assert.equal(handedBack, atKill.lockedTasks, "the tasks locked at the kill were handed back");

      // Jobs the kill left in `running` were taken again and finished.
      for (const job of await probe.jobs(leftRunning)) {
        assert.equal(job.status, "completed", `job ${job.id} left running by the kill`);
        assert.ok(job.attempts >= 2, `job ${job.id} ran again (attempts ${job.attempts})`);
      }

      const messages = await allMessages(server, key);
      const counts = tally(messages.map((m) => m.transactionId));
      for (const [tx, count] of counts) {
        assert.ok(sent.has(tx), `a message nobody triggered: ${tx}`);
        assert.equal(count, 1, `transactionId ${tx} has ${count} messages`);
      }
      for (const m of messages) {
        assert.equal(
          m.subscriberId,
          sent.get(m.transactionId),
          `message ${m.id} went to its trigger's subscriber`,
        );
        assert.equal(m.content, m.transactionId);
      }
      const missing = [...acked].filter((tx) => !counts.has(tx));
      assert.deepEqual(missing, [], "every acknowledged trigger has its message");
      // Each subscriber's feed holds exactly its messages.
      for (const subscriberId of subscribers) {
        const feed = await feedTransactions(server, key, subscriberId);
        const expected = messages.filter((m) => m.subscriberId === subscriberId).map((m) => m.transactionId);
        assert.deepEqual(feed.sort(), expected.sort(), `the feed of ${subscriberId}`);
      }
      const inFlightCommitted = messages.length - acked.size;
      console.log(
        `[${backend}] cycle ${cycle}: SIGKILL after ${ackedThisCycle} acknowledged triggers (${acked.size} in all); ` +
          `${leftRunning.length} jobs left running, ${atKill.tasks} tasks queued (${atKill.lockedTasks} locked) at the kill; ` +
          `the restarted worker handed back ${handedBack} and drained ${drainMs} ms after it listened; ${messages.length} messages, one per transactionId ` +
          `(${inFlightCommitted} unacknowledged in-flight triggers had committed)`,
      );
    }
    const stopped = await stopServer(server);
    assert.equal(stopped.code, 0, "a clean stop after the crashes");
    console.log(
      `[${backend}] engine crash: ${acked.size} triggers acknowledged over ${CYCLES} SIGKILLs, ` +
        `${totalLeftRunning} jobs cut short mid-run, 0 lost, 0 doubled (${Date.now() - started} ms)`,
    );
  });
});
