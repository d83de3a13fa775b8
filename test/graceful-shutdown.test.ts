// Proof 2 (issue 4): SIGTERM. Requests the server is in the middle of when the signal comes get
// their whole answer and their effect; requests that come after it are refused (503 with
// Retry-After, or the port is closed); the process closes the database and exits 0. Then the same
// under load: every request the server took in is answered, and what it acknowledged is kept.
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { openStore } from "../src/store/store.ts";
import { readBool } from "../src/store/values.ts";
import { assertErrorBody } from "./error-body.ts";
import { poll } from "./poll.ts";
import {
  type CallResult,
  call,
  forEachProcessBackend,
  type ServerProcess,
  seedOrganization,
  stopServer,
  waitFor,
} from "./processes.ts";

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

interface SlowRequest {
  readonly id: string;
  readonly body: Record<string, unknown>;
  /** True once the whole answer has come. */
  readonly answered: boolean;
  /** Sends the rest of the body, a few bytes at a time. */
  finish(): Promise<void>;
  /** The answer, once its last byte has come (rejects if the connection ends first). */
  readonly answer: Promise<Answer>;
}

/**
 * A request on a connection of its own whose body is sent in two halves: after the first the server
 * has taken it in (its hooks ran, its handler waits for the body), so it is in flight until finish().
 */
function slowRequest(
  server: ServerProcess,
  method: string,
  path: string,
  apiKey: string,
  body: Record<string, unknown>,
  id: string,
): SlowRequest {
  const payload = Buffer.from(JSON.stringify(body));
  const half = Math.floor(payload.length / 2);
  const { hostname, port } = new URL(server.url);
  const req = http.request({
    host: hostname,
    port,
    method,
    path,
    agent: false,
    headers: {
      authorization: `ApiKey ${apiKey}`,
      "content-type": "application/json",
      "content-length": payload.length,
      "x-request-id": id,
    },
  });
  let answered = false;
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        answered = true;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        });
      });
    });
  });
  // Settled by the test; never an unhandled rejection meanwhile.
  answer.catch(() => {});
  req.write(payload.subarray(0, half));
  return {
    id,
    body,
    get answered() {
      return answered;
    },
    answer,
    async finish() {
      for (let at = half; at < payload.length; at += 8) {
        // A slow client: the pace of the body is the condition under test, not a wait.
        await sleep(10);
        req.write(payload.subarray(at, at + 8));
      }
      req.end();
    },
  };
}

/** The request ids the server logged as taken in ("incoming request", at LOG_LEVEL=debug). */
function takenIn(server: ServerProcess): Set<string> {
  return new Set(
    server
      .logs()
      .filter((entry) => entry.msg === "incoming request" && typeof entry.reqId === "string")
      .map((entry) => entry.reqId as string),
  );
}

forEachProcessBackend("graceful shutdown", (suite) => {
  test("requests in flight at SIGTERM get their whole answer and their effect; later ones are refused; exit 0", async () => {
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    const key = seed.apiKey;
    const server = await suite.start({
      ...db.env,
      RATE_LIMIT_RPS: "0",
      LOG_LEVEL: "debug",
      // Room for the slow bodies on a busy machine; the test never waits that long.
      SHUTDOWN_TIMEOUT_MS: "60000",
    });
    const workflow = await call(server, "POST", "/v1/workflows", key, {
      name: "Switched while stopping",
      notificationGroupId: seed.generalGroupId,
      steps: [{ template: { type: "in_app", content: "Hello" } }],
    });
    assert.equal(workflow.status, 201, workflow.text);
    const workflowId: string = workflow.json().data._id;
    assert.equal(workflow.json().data.active, false);

    const inFlight = [
      ...[1, 2, 3].map((n) =>
        slowRequest(
          server,
          "POST",
          "/v1/notification-groups",
          key,
          { name: `In flight ${n}` },
          `slow-group-${n}`,
        ),
      ),
      ...[1, 2].map((n) =>
        slowRequest(
          server,
          "POST",
          "/v1/workflows",
          key,
          {
            name: `In flight workflow ${n}`,
            notificationGroupId: seed.generalGroupId,
            steps: [{ template: { type: "in_app", content: `Workflow ${n} says hello` } }],
          },
          `slow-workflow-${n}`,
        ),
      ),
      slowRequest(server, "PUT", `/v1/workflows/${workflowId}/status`, key, { active: true }, "slow-status"),
    ];
    await waitFor(
      server,
      () => inFlight.every((r) => takenIn(server).has(r.id)),
      "the server to take in every slow request",
    );
    assert.deepEqual(
      inFlight.filter((r) => r.answered).map((r) => r.id),
      [],
      "no slow request can be answered before its body is complete",
    );

    server.child.kill("SIGTERM");
    await waitFor(
      server,
      () => server.logs().some((entry) => entry.msg === "shutting down: finishing in-flight requests"),
      "the server to start draining",
    );

    // New requests from now on are refused: a 503 that says why, or no connection at all.
    const late = await Promise.all(
      [1, 2, 3, 4].map(async (n) => {
        const id = `late-${n}`;
        const name = `Too late ${n}`;
        try {
          return {
            id,
            name,
            res: await call(server, "POST", "/v1/notification-groups", key, { name }, { "x-request-id": id }),
          };
        } catch (error) {
          return { id, name, error: String((error as Error).cause ?? error) };
        }
      }),
    );

    // The requests in flight now send the rest of their bodies, and get their whole answers.
    await Promise.all(inFlight.map((r) => r.finish()));
    const answers = await Promise.all(inFlight.map((r) => r.answer));
    const exit = await server.exited;

    for (const [i, answer] of answers.entries()) {
      const request = inFlight[i] as SlowRequest;
      const expected = request.id === "slow-status" ? 200 : 201;
      assert.equal(answer.status, expected, `${request.id}: ${answer.status} ${answer.text}`);
      assert.match(String(answer.headers["content-type"]), /^application\/json/, request.id);
      assert.equal(Number(answer.headers["content-length"]), Buffer.byteLength(answer.text), request.id);
      const data = JSON.parse(answer.text).data;
      if (request.id === "slow-status") {
        assert.equal(data._id, workflowId);
        assert.equal(data.active, true);
      } else {
        assert.equal(data.name, request.body.name, request.id);
      }
    }
    for (const attempt of late) {
      if (attempt.res) {
        const res: CallResult = attempt.res;
        assertErrorBody(
          { statusCode: res.status, headers: Object.fromEntries(res.headers), body: res.text },
          503,
          { path: "/v1/notification-groups", message: /shutting down/ },
        );
        assert.equal(res.headers.get("retry-after"), "1");
      } else {
        // No answer: then the server never took it in.
        assert.ok(
          !takenIn(server).has(attempt.id),
          `${attempt.id} was taken in, never answered (${attempt.error})`,
        );
      }
    }
    assert.equal(exit.code, 0, server.stdout().slice(-2000));
    assert.equal(exit.signal, null);
    assert.ok(
      server.logs().some((entry) => entry.msg === "stopped"),
      "the database was closed",
    );
    console.log(
      `[${suite.backend}] SIGTERM with ${inFlight.length} requests in flight: all answered in full; ` +
        `${late.filter((a) => a.res).length} later requests refused with 503, ` +
        `${late.filter((a) => !a.res).length} found the port closed; exit code ${exit.code}`,
    );

    // Their effects are in the database; the refused ones left none.
    const store = await openStore(db.storeOptions);
    try {
      const groups = await store.db
        .selectFrom("notification_groups")
        .select(["id", "name"])
        .where("environment_id", "=", seed.environmentId)
        .execute();
      const workflows = await store.db
        .selectFrom("workflows")
        .select(["id", "name", "active", "draft"])
        .where("environment_id", "=", seed.environmentId)
        .execute();
      for (const [i, answer] of answers.entries()) {
        const request = inFlight[i] as SlowRequest;
        const data = JSON.parse(answer.text).data;
        if (request.id.startsWith("slow-group")) {
          assert.deepEqual(
            groups.filter((g) => g.id === data._id),
            [{ id: data._id, name: request.body.name }],
          );
        } else if (request.id.startsWith("slow-workflow")) {
          assert.deepEqual(
            workflows.filter((w) => w.id === data._id).map((w) => w.name),
            [request.body.name],
          );
        } else {
          const switched = workflows.find((w) => w.id === workflowId);
          assert.ok(switched);
          assert.equal(readBool(switched.active), true);
          assert.equal(readBool(switched.draft), false);
        }
      }
      for (const attempt of late) {
        assert.ok(
          !groups.some((g) => g.name === attempt.name),
          `${attempt.id} was refused, yet its group exists`,
        );
      }
    } finally {
      await store.close();
    }
  });

  test("SIGTERM under load: zero accepted requests fail, exit 0, every acknowledged write kept", async () => {
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    // debug: the server logs "incoming request" for every request it takes in.
    const env = { ...db.env, RATE_LIMIT_RPS: "0", LOG_LEVEL: "debug" };
    const live = await suite.start(env);
    const key = seed.apiKey;
    const workflow = await call(live, "POST", "/v1/workflows", key, {
      name: "Shutdown workflow",
      notificationGroupId: seed.generalGroupId,
      steps: [{ template: { type: "in_app", content: "Hello" } }],
    });
    assert.equal(workflow.status, 201, workflow.text);
    const workflowId: string = workflow.json().data._id;

    interface Outcome {
      id: string;
      sentAt: number;
      answeredAt: number;
      status?: number;
      retryAfter?: string | null;
      text?: string;
      error?: string;
    }
    const outcomes: Outcome[] = [];
    const createdGroups = new Map<string, string>();
    let sigtermAt = Number.POSITIVE_INFINITY;
    let exitedAt = Number.POSITIVE_INFINITY;
    /** The load workers that met the closed port after the process exited (or ran out of time). */
    const metClosedPort = new Set<number>();
    let gone = false;
    let n = 0;
    const worker = async (w: number) => {
      // Bounded: stops when the port is closed for good, or after 30 s.
      const until = Date.now() + 30_000;
      while (!gone && Date.now() < until) {
        const id = `gs-${w}-${n++}`;
        const outcome: Outcome = { id, sentAt: performance.now(), answeredAt: 0 };
        outcomes.push(outcome);
        const group = n % 2 === 0;
        const name = `Shutdown group ${id}`;
        try {
          const res = group
            ? await call(live, "POST", "/v1/notification-groups", key, { name }, { "x-request-id": id })
            : await call(
                live,
                "PUT",
                `/v1/workflows/${workflowId}/status`,
                key,
                { active: n % 4 === 1 },
                { "x-request-id": id },
              );
          outcome.status = res.status;
          outcome.retryAfter = res.headers.get("retry-after");
          outcome.text = res.text;
          if (group && res.status === 201) createdGroups.set(res.json().data._id, name);
        } catch (error) {
          outcome.error = String((error as Error).cause ?? error);
          if (outcome.sentAt > exitedAt) metClosedPort.add(w);
          // Paces a load worker that found the port closed (the load is the stimulus, not a wait).
          if (performance.now() > sigtermAt) await sleep(20);
        }
        outcome.answeredAt = performance.now();
      }
      metClosedPort.add(w);
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    // Let the load run, then SIGTERM in the middle of it.
    await poll(
      () => outcomes.filter((o) => o.status !== undefined).length,
      (n) => n >= 200,
      {
        what: "200 answers under load",
        everyMs: 5,
      },
    );
    sigtermAt = performance.now();
    live.child.kill("SIGTERM");
    const exit = await live.exited;
    exitedAt = performance.now();
    // Once every worker has met the closed port, stop them.
    await poll(
      () => metClosedPort.size,
      (n) => n === workers.length,
      {
        what: "every load worker to meet the closed port",
      },
    );
    gone = true;
    await Promise.all(workers);

    const received = takenIn(live);
    let ok = 0;
    let refused503 = 0;
    let refusedConnection = 0;
    let inFlightAtSigterm = 0;
    const failed: string[] = [];
    for (const o of outcomes) {
      if (o.sentAt < sigtermAt && o.answeredAt > sigtermAt && o.status !== undefined && o.status < 300)
        inFlightAtSigterm++;
      if (o.status === 200 || o.status === 201) ok++;
      else if (o.status === 503 && o.retryAfter === "1" && /shutting down/.test(o.text ?? "")) refused503++;
      else if (o.status !== undefined) failed.push(`${o.id}: ${o.status} ${o.text}`);
      else if (received.has(o.id)) failed.push(`${o.id}: taken in, never answered (${o.error})`);
      else refusedConnection++;
    }
    console.log(
      `[${suite.backend}] SIGTERM under load: ${outcomes.length} requests; ${ok} answered 2xx ` +
        `(${inFlightAtSigterm} of them in flight at SIGTERM); ${refused503} refused with 503 + Retry-After ` +
        `while draining; ${refusedConnection} found the port closed; ${failed.length} accepted requests failed; ` +
        `exit code ${exit.code} after ${Math.round(exitedAt - sigtermAt)} ms`,
    );
    assert.deepEqual(failed, [], "no request the server took in failed");
    assert.equal(exit.code, 0, live.stdout().slice(-2000));
    assert.ok(
      live.logs().some((entry) => entry.msg === "stopped"),
      "the database was closed",
    );

    // Everything acknowledged is there.
    const again = await suite.start(env);
    const list = await call(again, "GET", "/v1/notification-groups", key);
    const names = new Map<string, string>(
      list.json().data.map((g: { _id: string; name: string }) => [g._id, g.name]),
    );
    for (const [id, name] of createdGroups) assert.equal(names.get(id), name);
    assert.equal((await stopServer(again)).code, 0);
  });
});
