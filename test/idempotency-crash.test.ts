// Idempotency-Key across a crash: a real server is killed (SIGKILL) while creates with keys are in
// flight, restarted on the same data, and every create is retried with its key. Each key must end
// with exactly one workflow: answered ones replay their first response; ones cut off either replay
// (their write committed) or run now (it did not), never twice.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { poll } from "./poll.ts";
import { call, forEachProcessBackend, seedOrganization, stopServer } from "./processes.ts";

const REQUESTS = 40;
/** How long a retry may keep hearing 409 (a claim cut off by the crash lapses after 10 s). */
const RETRY_FOR_MS = 30_000;

forEachProcessBackend("Idempotency-Key across a SIGKILL", (suite) => {
  test("every key ends with exactly one workflow; answered ones replay their first response", async () => {
    const db = await suite.database({ migrated: true });
    const org = await seedOrganization(db);
    const running = await suite.start(db.env);
    const keys = Array.from({ length: REQUESTS }, () => randomUUID());
    const body = (i: number) => ({ name: `Crash ${i}`, notificationGroupId: org.generalGroupId });
    const answered = new Map<string, string>();
    let kill!: () => void;
    const killed = new Promise<void>((resolve) => {
      kill = resolve;
    });
    const attempts = keys.map(async (key, i) => {
      try {
        const res = await call(running, "POST", "/v1/workflows", org.apiKey, body(i), {
          "idempotency-key": key,
        });
        if (res.status === 201) answered.set(key, res.text);
        if (answered.size === REQUESTS / 4) kill();
      } catch {
        // Cut off by the kill: no answer.
      }
    });
    // Kill once a quarter of them were answered, with the rest in flight.
    await Promise.race([killed, Promise.all(attempts)]);
    running.child.kill("SIGKILL");
    await running.exited;
    await Promise.all(attempts);
    assert.ok(answered.size >= 1, "some creates were answered before the kill");

    const server = await suite.start(db.env);
    const ids = new Set<string>();
    for (const [i, key] of keys.entries()) {
      // Retried as a 409 says (Retry-After: 1) until the claim the crash cut off has lapsed.
      const res = await poll(
        async () => {
          const answer = await call(server, "POST", "/v1/workflows", org.apiKey, body(i), {
            "idempotency-key": key,
          });
          if (answer.status === 409) assert.equal(answer.headers.get("retry-after"), "1");
          return answer;
        },
        (answer) => answer.status !== 409,
        { what: `key ${key} to be free of its cut-off claim`, limitMs: RETRY_FOR_MS, everyMs: 1_000 },
      );
      assert.equal(res.status, 201, res.text);
      const first = answered.get(key);
      if (first !== undefined) {
        assert.equal(res.headers.get("idempotency-replay"), "true");
        assert.equal(res.text, first, "the replay is the first response, byte for byte");
      }
      ids.add(res.json().data._id);
    }
    assert.equal(ids.size, REQUESTS);
    const list = await call(server, "GET", "/v1/workflows?limit=100", org.apiKey);
    assert.equal(list.json().totalCount, REQUESTS, "one workflow per key, none twice");
    assert.deepEqual(new Set(list.json().data.map((w: { _id: string }) => w._id)), ids);
    assert.equal((await stopServer(server)).code, 0);
  });
});
