// Proof 5 (issue 4): steady load. LOAD_SECONDS (60) at LOAD_RATE (200) requests/s, far below what one
// process serves, against a real server process on each backend, with the rate limiter on. A mix
// of reads, status changes, group creations and list pages. Zero errors and zero non-2xx answers;
// resident memory flat after a warm-up (the figures are printed).
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import autocannon from "autocannon";
import type { BackendName } from "../backends.ts";
import { call, forEachProcessBackend, seedOrganization, stopServer } from "../processes.ts";

const SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const RATE = Number(process.env.LOAD_RATE ?? 200);
const WARMUP = Math.min(15, Math.floor(SECONDS / 4));
const MB = 1024 * 1024;

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kb * 1024;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const average = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

// LOAD_BACKENDS=sqlite (or postgres) runs one backend only.
const only = process.env.LOAD_BACKENDS?.split(",").map((b) => b.trim() as BackendName);
forEachProcessBackend(
  "steady load",
  (suite) => {
    const backend = suite.backend;
    test(`${SECONDS} s at ${RATE} requests/s: zero errors, RSS flat after ${WARMUP} s of warm-up`, {
      timeout: (SECONDS + 120) * 1000,
    }, async () => {
      const db = await suite.database({ migrated: true });
      const seed = await seedOrganization(db);
      const live = await suite.start(db.env);
      const key = seed.apiKey;
      const created = await call(live, "POST", "/v1/workflows", key, {
        name: "Load workflow",
        notificationGroupId: seed.generalGroupId,
        steps: [{ template: { type: "email", subject: "Hi", content: "Hello {{name}}" } }],
      });
      assert.equal(created.status, 201, created.text);
      const workflowId: string = created.json().data._id;
      const headers = { authorization: `ApiKey ${key}`, "content-type": "application/json" };
      let groupNumber = 0;

      const samples: [number, number][] = [];
      const started = Date.now();
      const sampler = setInterval(() => samples.push([(Date.now() - started) / 1000, rssOf(live.pid)]), 1000);
      const result = await autocannon({
        url: live.url,
        connections: 8,
        overallRate: RATE,
        duration: SECONDS,
        timeout: 10,
        requests: [
          { method: "GET", path: `/v1/workflows/${workflowId}`, headers },
          { method: "PUT", path: `/v1/workflows/${workflowId}/status`, headers, body: '{"active":true}' },
          { method: "GET", path: "/v1/workflows?page=0&limit=10", headers },
          {
            method: "PUT",
            path: `/v1/notification-templates/${workflowId}/status`,
            headers,
            body: '{"active":false}',
          },
          {
            method: "POST",
            path: "/v1/notification-groups",
            headers,
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({ name: `Load group ${groupNumber++}` }),
            }),
          },
          { method: "GET", path: "/health" },
        ],
      });
      clearInterval(sampler);

      const after = samples.filter(([t]) => t >= WARMUP);
      const head = average(after.slice(0, 10).map(([, r]) => r));
      const tail = average(after.slice(-10).map(([, r]) => r));
      const peak = Math.max(...after.map(([, r]) => r));
      const perMinute = slope(after) * 60;
      const non2xx = result.non2xx;
      console.log(
        `[${backend}] load: ${result.requests.total} requests in ${SECONDS} s (${result.requests.average}/s average, ` +
          `target ${RATE}/s); ${result.errors} errors, ${result.timeouts} timeouts, ${non2xx} non-2xx; latency p50 ` +
          `${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms; RSS after warm-up ` +
          `${(head / MB).toFixed(1)} MB, at the end ${(tail / MB).toFixed(1)} MB (${(((tail - head) / head) * 100).toFixed(1)}%), ` +
          `peak ${(peak / MB).toFixed(1)} MB, trend ${(perMinute / MB).toFixed(2)} MB/min`,
      );
      assert.equal(result.errors, 0, "connection errors");
      assert.equal(result.timeouts, 0, "timeouts");
      assert.equal(non2xx, 0, "non-2xx answers");
      assert.ok(result.requests.total >= RATE * SECONDS * 0.9, "the rate was held");
      // Flat: within 15% (or 15 MB, whichever is larger) of where it stood after warm-up.
      assert.ok(tail - head < Math.max(15 * MB, head * 0.15), "RSS grew after warm-up");
      const stopped = await stopServer(live);
      assert.equal(stopped.code, 0);
    });
  },
  // Both backends' servers under load at once: each half waits on its own server, and the rate
  // asked of each (far below what one process serves) leaves the machine room for both.
  { ...(only ? { only } : {}), sideBySide: true },
);
