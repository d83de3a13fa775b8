// A topic's fan-out under SIGKILL (docs/engine.md, "Triggering and the acknowledgement"): each batch of
// 500 members writes its runs and delivers their leading in-app steps in one transaction with the
// fan-out's cursor. A real server (API and worker in one process) is killed once the first batch's
// messages are in and before the last batch's are; after a restart the fan-out resumes after the last
// committed batch, and every member ends with exactly one message: none lost, none twice.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import {
  allMessages,
  assertOneMessageEach,
  crashTestStart,
  inAppWorkflow,
  killServer,
} from "./engine-processes.ts";
import { poll } from "./poll.ts";
import { call, forEachProcessBackend, type ServerProcess, stopServer } from "./processes.ts";

// Four batches: the kill, once the first is in, lands before the last on any machine this runs on.
const MEMBERS = 2_000;

forEachProcessBackend("fan-out: SIGKILL between a topic's batches", (suite) => {
  const backend = suite.backend;
  test(`a topic of ${MEMBERS.toLocaleString("en")}: every member gets one message across a SIGKILL`, async (t) => {
    const start = await crashTestStart(suite, t);
    const { seed, env, probe, key } = start;
    let server: ServerProcess = start.server;
    const name = await inAppWorkflow(server, key, seed.generalGroupId, "Fan-out crash");
    const prefix = `fc-${randomBytes(3).toString("hex")}`;
    const members = Array.from({ length: MEMBERS }, (_, i) => `${prefix}-${i}`);
    for (let i = 0; i < MEMBERS; i += 500) {
      const res = await call(server, "POST", "/v1/subscribers/bulk", key, {
        subscribers: members.slice(i, i + 500).map((subscriberId) => ({ subscriberId })),
      });
      assert.ok(res.status === 200 || res.status === 201, res.text);
    }
    const topicKey = `${prefix}-topic`;
    assert.equal((await call(server, "POST", "/v1/topics", key, { key: topicKey, name: "All" })).status, 201);
    const added = await call(server, "POST", `/v1/topics/${topicKey}/subscribers`, key, {
      subscribers: members,
    });
    assert.equal(added.status, 200, added.text);

    const tx = `${prefix}-tx`;
    const res = await call(server, "POST", "/v1/events/trigger", key, {
      name,
      to: { type: "Topic", topicKey },
      payload: { tx },
      transactionId: tx,
    });
    assert.equal(res.status, 201, res.text);
    // Killed as soon as a batch is in (the bound is a safety net for a hung run, not a timing claim).
    const before = await poll(
      () => probe.count("messages"),
      (n) => n > 0,
      { what: "the fan-out's first batch of messages", limitMs: 30_000, everyMs: 2 },
    );
    await killServer(server);
    // The runs are written a whole batch at a time. Most of a batch's members have their message in
    // that same transaction; one whose render ran out of the inline budget (a loaded machine) has its
    // step queued as a task instead, so the messages at the kill need not be whole batches.
    const atKill = await probe.count("notifications");
    const messagesAtKill = await probe.count("messages");
    assert.ok(atKill < MEMBERS, `the kill came after the last batch (${atKill} runs): it proves nothing`);
    assert.equal(atKill % 500, 0, `whole batches only at the kill: ${atKill} runs`);
    assert.ok(messagesAtKill <= atKill, `${messagesAtKill} messages for ${atKill} runs`);
    server = await suite.start(env);
    await probe.drained(60_000);
    const messages = await allMessages(server, key);
    assertOneMessageEach(messages, members);
    assert.ok(messages.every((m) => m.transactionId === tx && m.content === tx));
    const stopped = await stopServer(server);
    assert.equal(stopped.code, 0);
    console.log(
      `[${backend}] fan-out crash: SIGKILL with ${atKill} of ${MEMBERS} runs and ${messagesAtKill} messages in ` +
        `(${before} messages when seen); ` +
        `after the restart ${messages.length}, one a member`,
    );
  });
});
