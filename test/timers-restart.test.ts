// Delays and digest windows are rows in the database (docs/engine.md, "Delays and digests"), so a process
// that dies during them delays nothing and delivers nothing twice. Real server processes, real time (a
// 5-second delay and window, on purpose): on each backend, the server is killed (SIGKILL) during the wait and
// started again; on PostgreSQL, two servers share a digest of 100 concurrent events and the one that holds
// the window's timer dies before it closes.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, test } from "node:test";
import { openStore } from "../src/store/store.ts";
import { EngineProbe } from "./engine-processes.ts";
import { poll } from "./poll.ts";
import {
  type CallResult,
  call,
  forEachProcessBackend,
  type ProcessDatabase,
  type ServerProcess,
  seedOrganization,
  stopServer,
} from "./processes.ts";

function tallyOf(values: string[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const v of values) tally[v] = (tally[v] ?? 0) + 1;
  return tally;
}
const hexId = () => randomBytes(12).toString("hex");

function ok(res: CallResult, status = 201) {
  assert.equal(res.status, status, res.text);
  return res.json();
}

/**
 * Waits until no job is unfinished and the queue holds no task (the dead workers' ones handed back
 * on PostgreSQL after WORKER_DEAD_AFTER_MS, 30 s by default, included).
 */
async function drained(db: ProcessDatabase): Promise<void> {
  const probe = new EngineProbe(db);
  try {
    await probe.drained(90_000);
  } finally {
    await probe.close();
  }
}

/**
 * The database's view, read directly through one store per database, opened on first use and
 * closed when the file's tests end (opened for each read, the polls below cost more CPU than the
 * servers they watch).
 */
const stores = new Map<ProcessDatabase, ReturnType<typeof openStore>>();
after(async () => {
  for (const store of stores.values()) await (await store).close();
});
async function withStore<T>(
  db: ProcessDatabase,
  fn: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>,
) {
  let store = stores.get(db);
  if (!store) {
    store = openStore({ ...db.storeOptions, pgPoolSize: 1 });
    stores.set(db, store);
  }
  return fn(await store);
}

interface Message {
  content: string;
  transactionId: string;
  createdAt: string;
}

forEachProcessBackend("timers across a restart", (suite) => {
  test("killed during a 5-second delay and a 5-second digest window: after a restart, each delivered once, on time", async () => {
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    const env = { ...db.env, RATE_LIMIT_RPS: "0" };
    let server: ServerProcess = await suite.start(env);
    const workflow = async (steps: unknown[]) =>
      ok(
        await call(server, "POST", "/v1/workflows", seed.apiKey, {
          name: `Timer ${hexId()}`,
          notificationGroupId: seed.generalGroupId,
          active: true,
          steps,
        }),
      ).data.triggers[0].identifier as string;
    const delayed = await workflow([
      { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "seconds" } },
      { template: { type: "in_app", content: "Delayed {{n}}" } },
    ]);
    const digest = await workflow([
      { template: { type: "digest" }, metadata: { amount: 5, unit: "seconds", digestKey: "thread" } },
      { template: { type: "in_app", content: "{{step.total_count}} new comments" } },
    ]);
    const subscriberId = hexId();
    const fire = (name: string, payload: Record<string, unknown>) =>
      call(server, "POST", "/v1/events/trigger", seed.apiKey, { name, to: subscriberId, payload });
    ok(await fire(delayed, { n: 1 }));
    for (let i = 0; i < 3; i++) ok(await fire(digest, { thread: "t" }));

    // Both timers are set and all three events are in the window (rows written), then the process
    // dies. Counted by step type: the steps after a merged event are `merged` too, so "four jobs
    // delayed or merged" could be met with the third event still on its way (it would then, rightly,
    // open a window of its own after the restart).
    const due = await poll(
      () =>
        withStore(db, (store) =>
          store.db
            .selectFrom("jobs")
            .select(["type", "status", "run_at"])
            .where("type", "in", ["delay", "digest"])
            .execute(),
        ),
      (jobs) =>
        jobs.filter((j) => j.type === "delay" && j.status === "delayed").length === 1 &&
        jobs.filter((j) => j.type === "digest" && j.status === "delayed").length === 1 &&
        jobs.filter((j) => j.type === "digest" && j.status === "merged").length === 2,
      { what: "the delay set, and the three events in the window", everyMs: 50 },
    );
    const dueOf = (type: string) =>
      new Date(due.find((j) => j.type === type && j.run_at !== null)?.run_at ?? 0).getTime();
    const dues: Record<string, number> = { "Delayed 1": dueOf("delay"), "3 new comments": dueOf("digest") };
    const killedAt = Date.now();
    await stopServer(server, "SIGKILL");
    server = await suite.start(env);
    const readyAt = Date.now();

    const messages = await poll(
      async () =>
        ok(await call(server, "GET", `/v1/messages?subscriberId=${subscriberId}`, seed.apiKey), 200)
          .data as Message[],
      (m) => m.length >= 2,
      { what: "both messages after the restart" },
    );
    // Nothing is left to deliver a second time: every job is final and the queue is empty.
    await drained(db);
    const after = ok(await call(server, "GET", `/v1/messages?subscriberId=${subscriberId}`, seed.apiKey), 200)
      .data as Message[];
    assert.deepEqual(
      after.map((m) => m.content).sort(),
      ["3 new comments", "Delayed 1"],
      "each delivered once",
    );
    for (const message of messages) {
      const dueAt = dues[message.content] ?? 0;
      const at = Date.parse(message.createdAt);
      assert.ok(at >= dueAt, `${message.content} came ${dueAt - at} ms early`);
      // Killed before the timer was due, the new process delivers it promptly: when it is back in
      // time, by its own timer; when its start outlasts the 5 s (it took 6 to 12 s with CI's three
      // test files and Chromium beside it), as overdue work taken at start. Promptly is 5 s here, not
      // the timer's precision (src/engine/queue/timers.test.ts proves "timed, not polled" and
      // `npm run bench` measures the lateness): on that loaded machine the three commits between
      // the due moment and the message each wait on the shared disk, and deliveries came up to
      // 1.5 s after the due moment (1,153 and 1,466 ms in two CI runs, on PostgreSQL; 881 ms on
      // SQLite in a run here). What it rules out is what a lost timer would cost: the dead
      // workers' sweep (30 s), graphile-worker's four-hour lock, or never. Killed after the due
      // moment, the dead process may have been running the timer's task: on PostgreSQL that task
      // is handed back once the dead workers are presumed dead (WORKER_DEAD_AFTER_MS, 30 s by
      // default), so up to that and a heartbeat more.
      const allowed = killedAt < dueAt ? 5_000 : 36_000;
      const late = at - Math.max(dueAt, readyAt);
      assert.ok(
        late < allowed,
        `${message.content} came ${late} ms after it was due and the server was back (killed ${dueAt - killedAt} ms before it was due, back ${readyAt - dueAt} ms after it)`,
      );
    }
  });

  test("two servers on PostgreSQL: 100 concurrent events give one digest of 100, though the window's process dies", async (t) => {
    if (suite.backend !== "postgres") {
      t.skip("one process per SQLite file");
      return;
    }
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    const env = { ...db.env, RATE_LIMIT_RPS: "0" };
    const servers = [await suite.start(env), await suite.start(env)] as [ServerProcess, ServerProcess];
    const created = ok(
      await call(servers[0], "POST", "/v1/workflows", seed.apiKey, {
        name: `Two servers ${hexId()}`,
        notificationGroupId: seed.generalGroupId,
        active: true,
        steps: [
          // Long enough for the 100 events to reach the digest before it closes: under CI's three test
          // files at once, two loaded servers took more than 8 s to run 100 digest jobs.
          { template: { type: "digest" }, metadata: { amount: 20, unit: "seconds", digestKey: "post" } },
          {
            template: {
              type: "in_app",
              content: "{{step.total_count}}|{{#each step.events}}{{n}},{{/each}}",
            },
          },
        ],
      }),
    );
    const name = created.data.triggers[0].identifier as string;
    const subscriberId = hexId();
    ok(await call(servers[0], "POST", "/v1/subscribers", seed.apiKey, { subscriberId }));
    const triggeredAt = Date.now();
    const txs = await Promise.all(
      Array.from({ length: 100 }, async (_, n) => {
        const res = ok(
          await call(servers[n % 2] as ServerProcess, "POST", "/v1/events/trigger", seed.apiKey, {
            name,
            to: subscriberId,
            payload: { post: "p", n },
          }),
        );
        return res.data.transactionId as string;
      }),
    );
    // Every event in the window; then one process dies (whichever ran the lead and added the close's
    // task: the survivor has seen that task in its own scans and must close the window on time).
    const lead = await poll(
      () =>
        withStore(db, (store) =>
          store.db
            .selectFrom("jobs")
            .select(["status", "updated_at"])
            .where("transaction_id", "in", txs)
            .where("type", "=", "digest")
            .execute(),
        ),
      (jobs) => jobs.length === 100 && jobs.every((j) => j.status !== "queued" && j.status !== "running"),
      { what: "100 events in the window", everyMs: 50 },
    );
    const statuses = `${JSON.stringify(tallyOf(lead.map((j) => j.status)))} ${Date.now() - triggeredAt} ms after the triggers`;
    assert.equal(lead.filter((j) => j.status === "delayed").length, 1, `one window, still open: ${statuses}`);
    assert.equal(lead.filter((j) => j.status === "merged").length, 99, `the others merged: ${statuses}`);
    const window = await withStore(db, (store) =>
      store.db.selectFrom("digest_windows").select(["closes_at"]).executeTakeFirstOrThrow(),
    );
    const closesAt = new Date(window.closes_at as string).getTime();
    const killedAt = Date.now();
    await stopServer(servers[0], "SIGKILL");
    const survivor = servers[1];
    const messages = await poll(
      async () =>
        ok(await call(survivor, "GET", `/v1/messages?subscriberId=${subscriberId}`, seed.apiKey), 200)
          .data as Message[],
      (m) => m.length >= 1,
      // Past the 30 s in which a dead process's task is handed back: the window may have closed
      // before the kill (below), and its task be the dead process's then.
      { what: "the digest", limitMs: 90_000 },
    );
    // Nothing is left to deliver a second time: every job is final and the queue is empty (a task
    // the dead process held included, once the survivor has handed it back and run it).
    await drained(db);
    const all = ok(await call(survivor, "GET", `/v1/messages?subscriberId=${subscriberId}`, seed.apiKey), 200)
      .data as Message[];
    assert.equal(all.length, 1, "one digest");
    const [count, list] = (all[0]?.content ?? "").split("|");
    assert.equal(count, "100");
    assert.deepEqual(
      (list ?? "")
        .split(",")
        .filter(Boolean)
        .map(Number)
        .sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, n) => n),
    );
    const late = Date.parse(messages[0]?.createdAt ?? "") - closesAt;
    // What this catches is the close waiting for the dead process's task to be handed back (30 s):
    // the lateness an idle machine shows is the bench's to report, a loaded CI here took 4.5 s and a
    // full run beside other work 11.3 s. It holds only when the window was still open at the kill
    // with time to spare: on a machine so loaded that the 100 events took most of the window, the
    // dead process may have been running the close itself, and its task is handed back as any is.
    if (closesAt - killedAt >= 2_000) {
      assert.ok(late >= 0 && late < 20_000, `the digest came ${late} ms after its window closed`);
    } else {
      assert.ok(late >= 0, `the digest came ${late} ms after its window closed`);
      t.diagnostic(
        `the window was open ${closesAt - killedAt} ms more at the kill: its lateness (${late} ms) is not judged`,
      );
    }
  });
});
