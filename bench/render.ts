// Runaway templates (issue 23), scenario `render`: does the service stay responsive while templates
// that ask for billions of loop iterations render? Per backend, a service of its own; an active
// workflow whose in-app step nests `{{#each @root.a}}` four deep (the finding: 100^4 iterations from
// `payload: {a: [0..99]}`, which once held the event loop for 49 s and stored a 100 MB message), then
// a normal in-app step. /health is probed every BENCH_RENDER_PROBE_MS (10) ms, one probe at a time
// over a kept-alive connection, first for BENCH_RENDER_IDLE_SECONDS (5) on the idle service, then
// while BENCH_RENDER_TRIGGERS (200) such triggers are sent at BENCH_RENDER_RATE (20) a second and
// until every job they made is final. Target: /health p99 ≤ 100 ms during the renders, every runaway
// step failed naming its limit, the step after it delivered.

import { randomBytes } from "node:crypto";
import http from "node:http";
import type { Child } from "./proc.ts";
import { type BackendName, type BenchDatabase, type Environment, openReader } from "./seed.ts";
import { Latencies, round } from "./stats.ts";

export const RUNAWAY =
  "{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}x{{/each}}{{/each}}{{/each}}{{/each}}";
const PAYLOAD = { a: Array.from({ length: 100 }, (_, i) => i) };
const FINAL = ["completed", "failed", "skipped", "canceled", "merged"];

export interface RenderSettings {
  triggers: number;
  /** Triggers a second, sent at that pace whatever the answers. */
  rate: number;
  probeMs: number;
  idleSeconds: number;
  /** The longest the renders may take to be final before the scenario gives up. */
  timeoutSeconds: number;
}

export const renderSettings = (intEnv: (name: string, fallback: number) => number): RenderSettings => ({
  triggers: intEnv("BENCH_RENDER_TRIGGERS", 200),
  rate: intEnv("BENCH_RENDER_RATE", 20),
  probeMs: intEnv("BENCH_RENDER_PROBE_MS", 10),
  idleSeconds: intEnv("BENCH_RENDER_IDLE_SECONDS", 5),
  timeoutSeconds: intEnv("BENCH_RENDER_TIMEOUT_SECONDS", 120),
});

interface Service {
  child: Child;
  url: string;
}

/** What run.ts lends. */
export interface RenderContext {
  settings: RenderSettings;
  log(message: string): void;
  startService(db: BenchDatabase, extra: Record<string, string>): Promise<Service>;
  environmentOf(db: BenchDatabase, name: string): Promise<Environment>;
}

export interface HealthFigures {
  probes: number;
  p50: number;
  p99: number;
  max: number;
  /** Probes answered otherwise than 200, or not at all. */
  failed: number;
}

/**
 * The service's own event-loop delay over a phase (prom-client's monitorEventLoopDelay, read from
 * /metrics, which resets it at each read): what /health's time owes to the event loop being held,
 * apart from its database ping and the host's other work.
 */
export interface EventLoopFigures {
  p50: number;
  p99: number;
  max: number;
}

export interface RenderFigures {
  backend: BackendName;
  triggers: number;
  rate: number;
  probeMs: number;
  /** From the first trigger until every job of the renders was final. */
  seconds: number;
  idle: HealthFigures;
  during: HealthFigures;
  idleLoop: EventLoopFigures;
  duringLoop: EventLoopFigures;
  /** The runaway steps failed with a detail naming a render limit; the steps after them delivered. */
  stoppedByLimit: number;
  deliveredAfter: number;
  /** The limits the runaway steps ran into, by their detail. */
  reasons: Record<string, number>;
  /** The longest content stored for the renders' messages, in characters. */
  largestMessage: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call<T>(method: string, url: string, apiKey: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `ApiKey ${apiKey}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** prom-client's sampling period for the event-loop delay (its eventLoopMonitoringPrecision). */
const LOOP_SAMPLING_MS = 10;

/**
 * The event-loop delay since the last read (the read resets it), in ms: how late the monitor's
 * timer fired past its sampling period (Node's histogram records the whole interval).
 */
async function eventLoop(url: string): Promise<EventLoopFigures> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => {
    const match = new RegExp(`^tidings_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m").exec(text);
    return round(Math.max(0, Number(match?.[1] ?? Number.NaN) * 1000 - LOOP_SAMPLING_MS));
  };
  return { p50: read("p50"), p99: read("p99"), max: read("max") };
}

/**
 * Probes /health every `everyMs` (one probe at a time, over one kept-alive connection, a probe
 * slower than the period followed at once by the next) until `done()` says so.
 */
async function probeHealth(url: string, everyMs: number, done: () => boolean): Promise<HealthFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = new Latencies(1_000_000);
  let failed = 0;
  try {
    while (!done()) {
      const started = performance.now();
      const status = await new Promise<number>((resolve) => {
        const req = http.get(`${url}/health`, { agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.setTimeout(5_000, () => req.destroy());
        req.on("error", () => resolve(0));
      });
      const took = performance.now() - started;
      latencies.record(took);
      if (status !== 200) failed++;
      if (took < everyMs) await sleep(everyMs - took);
    }
  } finally {
    agent.destroy();
  }
  return { probes: latencies.count, ...latencies.summary(), failed };
}

export async function runRender(
  ctx: RenderContext,
  db: BenchDatabase,
  backend: BackendName,
): Promise<RenderFigures> {
  const s = ctx.settings;
  const env = await ctx.environmentOf(db, "Bench render");
  const reader = openReader(db);
  // /metrics open, for the event-loop delay: this service answers the bench alone, on loopback.
  const service = await ctx.startService(db, { METRICS_PUBLIC: "1" });
  try {
    const groups = await call<{ data: { _id: string }[] }>(
      "GET",
      `${service.url}/v1/notification-groups`,
      env.apiKey,
    );
    const workflow = await call<{ data: { _id: string; triggers: { identifier: string }[] } }>(
      "POST",
      `${service.url}/v1/workflows`,
      env.apiKey,
      {
        name: "Bench runaway template",
        notificationGroupId: groups.data[0]?._id,
        active: true,
        steps: [
          { template: { type: "in_app", content: RUNAWAY } },
          { template: { type: "in_app", content: "After {{a.length}}" } },
        ],
      },
    );
    const name = workflow.data.triggers[0]?.identifier as string;

    ctx.log(`${backend}: render: /health on the idle service for ${s.idleSeconds} s`);
    const idleUntil = performance.now() + s.idleSeconds * 1000;
    await eventLoop(service.url);
    const idle = await probeHealth(service.url, s.probeMs, () => performance.now() >= idleUntil);
    const idleLoop = await eventLoop(service.url);

    ctx.log(`${backend}: render: ${s.triggers} runaway triggers at ${s.rate}/s, /health probed throughout`);
    const tag = randomBytes(4).toString("hex");
    const jobsOf = async () =>
      reader.all<{ status: string; n: number | string }>(
        "select status, count(*) as n from jobs where environment_id = ? group by status",
        [env.id],
      );
    let sent = 0;
    let final = false;
    const started = performance.now();
    const sending = (async () => {
      const answers: Promise<unknown>[] = [];
      for (let i = 0; i < s.triggers; i++) {
        const due = started + (i * 1000) / s.rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        answers.push(
          call("POST", `${service.url}/v1/events/trigger`, env.apiKey, {
            name,
            to: `render-${tag}-${i}`,
            payload: PAYLOAD,
            transactionId: `render-${tag}-${i}`,
          }).then(() => void sent++),
        );
      }
      await Promise.all(answers);
    })();
    // Every job final (two a trigger), looked at every 200 ms on a connection of the bench's own.
    const watching = (async () => {
      await sending;
      const deadline = performance.now() + s.timeoutSeconds * 1000;
      for (;;) {
        const rows = await jobsOf();
        const total = rows.reduce((sum, r) => sum + Number(r.n), 0);
        const open = rows.filter((r) => !FINAL.includes(r.status)).reduce((sum, r) => sum + Number(r.n), 0);
        if (total >= 2 * s.triggers && open === 0) break;
        if (performance.now() > deadline)
          throw new Error(`the renders were not final within ${s.timeoutSeconds} s: ${JSON.stringify(rows)}`);
        await sleep(200);
      }
      final = true;
    })();
    const [during] = await Promise.all([probeHealth(service.url, s.probeMs, () => final), watching]);
    const seconds = round((performance.now() - started) / 1000, 1);
    const duringLoop = await eventLoop(service.url);

    const details = await reader.all<{ detail: string; n: number | string }>(
      `select d.detail as detail, count(*) as n from execution_details d join jobs j on j.id = d.job_id
       where j.environment_id = ? and j.step_index = 0 and j.status = 'failed' and d.status = 'Failed'
       group by d.detail`,
      [env.id],
    );
    const reasons: Record<string, number> = {};
    let stoppedByLimit = 0;
    for (const row of details) {
      reasons[row.detail] = Number(row.n);
      if (/loops more than|takes longer than|renders more than/.test(row.detail))
        stoppedByLimit += Number(row.n);
    }
    const [after] = await reader.all<{ n: number | string }>(
      "select count(*) as n from jobs where environment_id = ? and step_index = 1 and status = 'completed'",
      [env.id],
    );
    const [largest] = await reader.all<{ n: number | string | null }>(
      "select max(length(content)) as n from messages where environment_id = ?",
      [env.id],
    );
    if (sent !== s.triggers) throw new Error(`${s.triggers - sent} runaway triggers were not acknowledged`);
    return {
      backend,
      triggers: s.triggers,
      rate: s.rate,
      probeMs: s.probeMs,
      seconds,
      idle,
      during,
      idleLoop,
      duringLoop,
      stoppedByLimit,
      deliveredAfter: Number(after?.n ?? 0),
      reasons,
      largestMessage: Number(largest?.n ?? 0),
    };
  } finally {
    await reader.close();
    await service.child.stop();
  }
}

const ms = (value: number) => value.toFixed(2);

/** The scenario's lines of the report: /health idle and during the renders, side by side per backend. */
export function renderLines(figures: RenderFigures[]): string[] {
  const out: string[] = [];
  for (const f of figures) {
    const h = (x: HealthFigures) =>
      `p50 ${ms(x.p50)} p99 ${ms(x.p99)} max ${ms(x.max)} ms (${x.probes} probes${x.failed ? `, ${x.failed} failed` : ""})`;
    const loop = (x: EventLoopFigures) => `p50 ${ms(x.p50)} p99 ${ms(x.p99)} max ${ms(x.max)} ms`;
    out.push(
      `render ${f.backend}: the service's event-loop delay, idle ${loop(f.idleLoop)}; during the renders ${loop(f.duringLoop)}`,
    );
    out.push(
      `render ${f.backend}: /health every ${f.probeMs} ms, idle ${h(f.idle)}; during ${f.triggers} runaway triggers at ${f.rate}/s (${f.seconds} s until all final) ${h(f.during)}; ` +
        `${f.stoppedByLimit}/${f.triggers} stopped by a limit, ${f.deliveredAfter} steps after them delivered, largest message ${f.largestMessage} characters`,
    );
    for (const [reason, n] of Object.entries(f.reasons)) out.push(`render ${f.backend}:   ${n}× ${reason}`);
  }
  return out;
}
