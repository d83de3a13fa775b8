// Triggers sent from a process of their own, where the engine's figures need each trigger's send
// time rather than autocannon's totals: a fixed batch as fast as the connections allow, or an
// open-loop rate. Reads its spec from the JSON file named by argv[2] and prints one JSON line.
//
// The batch is sent by autocannon, the client that measures PUT status and the acknowledged rate,
// so that the three figures compare: with node:http's client, which sent it before, the batch's
// messages came out at 0.62–0.88 of the acknowledged rate on SQLite although every one is written in
// its trigger's acknowledgement (0.92–1.05 with autocannon, side by side; docs/benchmarks.md). The
// open loop needs each trigger sent at its own moment, which node:http's client gives.
import fs from "node:fs";
import http from "node:http";
import autocannon from "autocannon";
import { Latencies, round } from "./stats.ts";

export interface TriggerLoadSpec {
  url: string;
  apiKey: string;
  /** The workflow's trigger identifier. */
  name: string;
  /** SubscriberIds, one per trigger, in turn (from `start`). */
  subscribers: string[];
  start: number;
  /** transactionId of the n-th trigger: `${tag}-${n}`. */
  tag: string;
  connections: number;
  /** batch: `count` triggers, `connections` in flight at a time. rate: `rate` a second for `seconds`, open loop. */
  mode: "batch" | "rate";
  count?: number;
  rate?: number;
  seconds?: number;
}

export interface TriggerLoadResult {
  /** Epoch ms (wall clock, sub-millisecond) the first trigger was due to be sent. */
  firstSendMs: number;
  /** Epoch ms the last answer arrived. */
  lastAnswerMs: number;
  ok: number;
  failed: number;
  statusCodes: Record<string, number>;
  /**
   * Answer latency of the 2xx triggers, from when each was due (open loop: from its scheduled
   * time, so a server that falls behind is charged for the wait).
   */
  answer: { p50: number; p99: number; max: number };
  /** rate mode: [n, epoch ms it was due] for every trigger answered 2xx. */
  sent: [number, number][];
}

const nowMs = () => performance.timeOrigin + performance.now();

async function main() {
  const file = process.argv[2];
  if (!file) throw new Error("usage: trigger-load.ts <spec.json>");
  const spec = JSON.parse(fs.readFileSync(file, "utf8")) as TriggerLoadSpec;
  const target = new URL("/v1/events/trigger", spec.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const statusCodes: Record<string, number> = {};
  const latencies = new Latencies(1_000_000);
  const sent: [number, number][] = [];
  let ok = 0;
  let failed = 0;
  let lastAnswerMs = 0;

  const triggerBody = (n: number) => {
    const subscriber = spec.subscribers[n % spec.subscribers.length] as string;
    return `{"name":${JSON.stringify(spec.name)},"to":${JSON.stringify(subscriber)},"transactionId":"${spec.tag}-${n}","payload":{"n":${n}}}`;
  };
  const send = (n: number, dueMs: number) =>
    new Promise<void>((resolve) => {
      const body = triggerBody(n);
      const req = http.request(
        target,
        {
          method: "POST",
          agent,
          headers: {
            authorization: `ApiKey ${spec.apiKey}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            const at = nowMs();
            lastAnswerMs = Math.max(lastAnswerMs, at);
            const code = res.statusCode ?? 0;
            statusCodes[code] = (statusCodes[code] ?? 0) + 1;
            if (code >= 200 && code < 300) {
              ok++;
              latencies.record(at - dueMs);
              if (spec.mode === "rate") sent.push([n, dueMs]);
            } else failed++;
            resolve();
          });
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error("timed out")));
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end(body);
    });

  const firstSendMs = nowMs();
  if (spec.mode === "batch") {
    let n = spec.start;
    // Each response's latency from its own send, by autocannon's clock.
    await new Promise<void>((resolve, reject) => {
      const instance = autocannon(
        {
          url: spec.url,
          connections: spec.connections,
          amount: spec.count ?? 0,
          headers: { authorization: `ApiKey ${spec.apiKey}`, "content-type": "application/json" },
          requests: [
            {
              setupRequest: ((req: { method?: string; path?: string; body?: string }) => {
                req.method = "POST";
                req.path = target.pathname;
                req.body = triggerBody(n++);
                return req;
              }) as never,
            },
          ],
        },
        (error) => (error ? reject(error) : resolve()),
      );
      instance.on("response", (_client, statusCode: number, _bytes: number, responseTime: number) => {
        lastAnswerMs = nowMs();
        statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
        if (statusCode >= 200 && statusCode < 300) {
          ok++;
          latencies.record(responseTime);
        } else failed++;
      });
      instance.on("reqError", () => {
        failed++;
      });
    });
  } else {
    const rate = spec.rate ?? 1;
    const total = Math.round(rate * (spec.seconds ?? 1));
    const interval = 1000 / rate;
    const pending: Promise<void>[] = [];
    let issued = 0;
    // Open loop: every trigger is due at firstSendMs + n × interval, whatever the answers do; the
    // agent queues what the connections cannot carry yet, and that wait counts in its latency.
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.min(total, Math.floor((nowMs() - firstSendMs) / interval) + 1);
        while (issued < due) {
          const n = issued++;
          pending.push(send(spec.start + n, firstSendMs + n * interval));
        }
        if (issued >= total) resolve();
        else setTimeout(tick, Math.max(0, Math.min(interval, 1)));
      };
      tick();
    });
    await Promise.all(pending);
  }
  agent.destroy();
  const out: TriggerLoadResult = {
    firstSendMs,
    lastAnswerMs: lastAnswerMs || nowMs(),
    ok,
    failed,
    statusCodes,
    answer: latencies.summary(),
    sent: sent.map(([n, due]) => [n, round(due, 3)]),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

await main();
