// Due delays run together under SIGKILL (docs/engine.md, "Due delays together"): delays that fall due
// at one moment are settled, and the in-app steps after them delivered, many to a transaction. A real
// server (API and worker in one process) is killed once the first messages are in and before the
// last; after a restart every run ends with exactly one message and each step with one record of
// what it did: none lost, none twice. The delays are scheduled at one date in real time (a server
// process has no clock a test can move), a few seconds ahead, as the timers' restart test does: how
// far ahead is measured first, from how long this machine takes to accept a call of 100 triggers.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { allMessages, assertOneMessageEach, crashTestStart, killServer } from "./engine-processes.ts";
import { poll } from "./poll.ts";
import { call, forEachProcessBackend, type ServerProcess, stopServer } from "./processes.ts";

// Enough that the kill, once the first messages are in, lands before the last on any machine this
// runs on (one a subscriber): a batch holds at most 100 (due-delays.ts), and 5 to 32 were in at
// the kill in runs of 600.
const RUNS = 300;

forEachProcessBackend("due delays together: SIGKILL while a batch of them is delivered", (suite) => {
  const backend = suite.backend;
  test(`${RUNS.toLocaleString("en")} delays due at one moment: every run gets one message across a SIGKILL`, async (t) => {
    const start = await crashTestStart(suite, t);
    const { seed, env, probe, key } = start;
    let server: ServerProcess = start.server;
    const created = await call(server, "POST", "/v1/workflows", key, {
      name: `Due together ${randomBytes(3).toString("hex")}`,
      notificationGroupId: seed.generalGroupId,
      active: true,
      steps: [
        { template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "sendAt" } },
        { template: { type: "in_app", content: "{{n}}" } },
      ],
    });
    assert.equal(created.status, 201, created.text);
    const name = created.json().data.triggers[0].identifier as string;
    const prefix = `dd-${randomBytes(3).toString("hex")}`;
    const bulk = async (subscribers: string, from: number, payload: Record<string, unknown>) => {
      const res = await call(server, "POST", "/v1/events/trigger/bulk", key, {
        events: Array.from({ length: 100 }, (_, j) => ({
          name,
          to: `${subscribers}-${from + j}`,
          payload: { n: String(from + j), ...payload },
        })),
      });
      assert.equal(res.status, 201, res.text);
      assert.ok(
        (res.json().data as { acknowledged: boolean }[]).every((r) => r.acknowledged),
        res.text,
      );
    };
    // A call like those below, to other subscribers and dated far ahead (their delays never fall due
    // here), times this machine: the date is three times the whole acceptance ahead, 5 s at least.
    // (The timed call is the workflow's first, and the slowest: the calls after it are warm.)
    const timedAt = Date.now();
    await bulk(`${prefix}-later`, 0, { sendAt: new Date(Date.now() + 86_400_000).toISOString() });
    const aheadMs = Math.max(5_000, 3 * (Date.now() - timedAt) * (RUNS / 100));
    const sendAt = new Date(Date.now() + aheadMs).toISOString();
    for (let i = 0; i < RUNS; i += 100) await bulk(prefix, i, { sendAt });
    assert.ok(
      Date.now() < Date.parse(sendAt),
      `every trigger was accepted before the date (${aheadMs} ms ahead)`,
    );
    // Killed as soon as messages come in (the bound is a safety net for a hung run, not a timing claim).
    const before = await poll(
      () => probe.count("messages"),
      (n) => n > 0,
      { what: "the first messages after the date", limitMs: aheadMs + 30_000, everyMs: 2 },
    );
    await killServer(server);
    const atKill = await probe.count("messages");
    assert.ok(atKill < RUNS, `the kill came after the last message (${atKill}): it proves nothing`);

    server = await suite.start(env);
    // Drained but for the 100 runs dated far ahead: their delays and the in-app jobs after them.
    await poll(
      () => probe.progress(),
      (p) =>
        p.unfinished.delayed === 100 &&
        p.unfinished.pending === 100 &&
        Object.keys(p.unfinished).length === 2 &&
        p.tasks === 100,
      { what: "every due delay's run to settle", limitMs: 60_000 },
    );
    const messages = await allMessages(server, key);
    const members = Array.from({ length: RUNS }, (_, i) => `${prefix}-${i}`);
    assertOneMessageEach(messages, members);
    assert.equal(await probe.repeatedDetails(), 0, "no step recorded twice");
    const stopped = await stopServer(server);
    assert.equal(stopped.code, 0);
    console.log(
      `[${backend}] due delays crash: dated ${aheadMs} ms ahead; SIGKILL with ${atKill} of ${RUNS} messages in (${before} when seen); ` +
        `after the restart ${messages.length}, one a run`,
    );
  });
});
