// Proof 2 (issue 4): SIGTERM under load. Every request the server took in is answered with its 2xx;
// requests that reach it after it began draining are refused cleanly (503 with Retry-After), or
// find the port closed; the process closes the database and exits 0; the writes it acknowledged
// are all there after a restart.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import {
  backendNames,
  call,
  type Database,
  freshDatabase,
  type ServerProcess,
  seedOrganization,
  startServer,
  stopServer,
} from "./server-process.ts";

const WORKERS = 16;

interface Outcome {
  id: string;
  sentAt: number;
  answeredAt: number;
  status?: number;
  retryAfter?: string | null;
  text?: string;
  error?: string;
}

for (const backend of backendNames) {
  describe(`graceful shutdown [${backend}]`, () => {
    let db: Database | undefined;
    let server: ServerProcess | undefined;
    after(async () => {
      if (server) await stopServer(server, "SIGKILL");
      await db?.destroy();
    });

    test("SIGTERM under load: zero accepted requests fail, exit 0, every acknowledged write kept", async () => {
      db = await freshDatabase(backend);
      const seed = await seedOrganization(db);
      // debug: the server logs "incoming request" for every request it takes in.
      const env = { ...db.env, RATE_LIMIT_RPS: "0", LOG_LEVEL: "debug" };
      server = await startServer(env);
      const live = server;
      const key = seed.apiKey;
      const workflow = await call(live, "POST", "/v1/workflows", key, {
        name: "Shutdown workflow",
        notificationGroupId: seed.generalGroupId,
        steps: [{ template: { type: "in_app", content: "Hello" } }],
      });
      assert.equal(workflow.status, 201, workflow.text);
      const workflowId: string = workflow.json().data._id;

      const outcomes: Outcome[] = [];
      const createdGroups = new Map<string, string>();
      let sigtermAt = Number.POSITIVE_INFINITY;
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
            if (performance.now() > sigtermAt) await new Promise((r) => setTimeout(r, 20));
          }
          outcome.answeredAt = performance.now();
        }
      };
      const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
      // Let the load run, then SIGTERM in the middle of it.
      while (outcomes.filter((o) => o.status !== undefined).length < 200)
        await new Promise((r) => setTimeout(r, 5));
      sigtermAt = performance.now();
      live.child.kill("SIGTERM");
      const exit = await live.exited;
      const exitedAt = performance.now();
      // Give the workers a moment to meet the closed port, then stop them.
      await new Promise((r) => setTimeout(r, 300));
      gone = true;
      await Promise.all(workers);
      server = undefined;

      // What the server took in: it logs "incoming request" with the request's id.
      const received = new Set<string>();
      for (const line of live.lines) {
        if (!line.startsWith("{")) continue;
        const entry = JSON.parse(line) as { msg?: string; reqId?: string };
        if (entry.msg === "incoming request" && entry.reqId) received.add(entry.reqId);
      }
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
        `[${backend}] SIGTERM under load: ${outcomes.length} requests; ${ok} answered 2xx ` +
          `(${inFlightAtSigterm} of them in flight at SIGTERM); ${refused503} refused with 503 + Retry-After ` +
          `while draining; ${refusedConnection} found the port closed; ${failed.length} accepted requests failed; ` +
          `exit code ${exit.code} after ${Math.round(exitedAt - sigtermAt)} ms`,
      );
      assert.deepEqual(failed, [], "no request the server took in failed");
      assert.equal(exit.code, 0, live.lines.slice(-5).join("\n"));
      assert.ok(
        live.lines.some((l) => l.includes('"msg":"stopped"')),
        "the database was closed",
      );

      // Everything acknowledged is there.
      server = await startServer(env);
      const list = await call(server, "GET", "/v1/notification-groups", key);
      const names = new Map<string, string>(
        list.json().data.map((g: { _id: string; name: string }) => [g._id, g.name]),
      );
      for (const [id, name] of createdGroups) assert.equal(names.get(id), name);
      const stopped = await stopServer(server);
      server = undefined;
      assert.equal(stopped.code, 0);
    });
  });
}
