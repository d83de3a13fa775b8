// The inbox in real time (docs/engine.md, "The inbox widget in real time"): with BENCH_SOCKETS (1,000)
// subscribers each holding a widget socket to one service process, how long from a trigger's POST until its
// subscriber's socket gets `notification_received` (p50/p99 over BENCH_SOCKET_TRIGGERS, 300, sent
// BENCH_SOCKET_RATE, 20, a second), and how much memory an idle socket costs the service (its RSS with the
// sockets open, less its RSS before, over their number). Run by `npm run bench` (BENCH_REALTIME=0 leaves it
// out), or alone: node --import tsx bench/realtime.ts
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import { postgresAnswers, redactDatabaseUrl } from "../src/store/store.ts";
import { freePort, procStatusKb, ROOT, SERVICE_NODE_FLAGS, spawnNode, waitForHttp } from "./proc.ts";
import { type BackendName, type BenchDatabase, cliInit, createDatabase } from "./seed.ts";
import { Latencies, round } from "./stats.ts";

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`);
  return value;
}

export interface RealtimeSettings {
  sockets: number;
  triggers: number;
  rate: number;
  databaseUrl: string;
  backends: BackendName[];
}

export const realtimeSettings = (): RealtimeSettings => ({
  sockets: intEnv("BENCH_SOCKETS", 1_000),
  triggers: intEnv("BENCH_SOCKET_TRIGGERS", 300),
  rate: intEnv("BENCH_SOCKET_RATE", 20),
  databaseUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  backends: (process.env.BENCH_BACKENDS ?? "sqlite,postgres")
    .split(",")
    .map((b) => b.trim()) as BackendName[],
});

export interface RealtimeResult {
  backend: BackendName;
  sockets: number;
  triggers: number;
  received: number;
  latency: { p50: number; p99: number; max: number };
  rssBeforeMb: number;
  rssWithSocketsMb: number;
  kbPerIdleSocket: number;
  /** The same from the JavaScript heap in use (its /metrics gauge), which the RSS may hide. */
  heapKbPerIdleSocket: number;
}

/** The service's JavaScript heap in use, in KB, by its /metrics. */
async function heapUsedKb(base: string): Promise<number> {
  const text = await fetch(`${base}/metrics`).then((r) => r.text());
  const line = text.split("\n").find((l) => l.startsWith("tidings_nodejs_heap_size_used_bytes "));
  return Number(line?.split(" ")[1] ?? Number.NaN) / 1024;
}

const log = (message: string) =>
  process.stderr.write(`[bench realtime ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function post<T>(url: string, headers: Record<string, string>, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return JSON.parse(text).data as T;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runBackend(backend: BackendName, settings: RealtimeSettings, workDir: string) {
  const db: BenchDatabase = await createDatabase(backend, workDir, settings.databaseUrl);
  const sockets: Socket[] = [];
  let stop: (() => Promise<void>) | undefined;
  try {
    const org = await cliInit(db, "Realtime bench");
    const dev = org.environments.find((e) => e.name === "Development");
    if (!dev) throw new Error("no Development environment");
    const port = await freePort();
    const { DATABASE_URL: _url, DATA_DIR: _dir, ...rest } = process.env;
    const child = spawnNode(
      [...SERVICE_NODE_FLAGS, "dist/main.js"],
      {
        ...rest,
        ...db.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        RATE_LIMIT_RPS: "0",
        LOG_LEVEL: "warn",
        METRICS_PUBLIC: "1",
      },
      path.join(workDir, `service-${backend}.log`),
    );
    stop = () => child.stop();
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/health`, child, 60_000);
    const auth = { authorization: `ApiKey ${dev.apiKey}` };
    const me = await fetch(`${base}/v1/environments/me`, { headers: auth }).then((r) => r.json());
    const applicationIdentifier = me.data.identifier as string;
    const groups = await fetch(`${base}/v1/notification-groups`, { headers: auth }).then((r) => r.json());
    const workflow = await post<{ triggers: { identifier: string }[] }>(`${base}/v1/workflows`, auth, {
      name: "Realtime bench",
      notificationGroupId: groups.data[0]._id,
      active: true,
      steps: [{ template: { type: "in_app", content: "{{tx}}" } }],
    });
    const name = workflow.triggers[0]?.identifier as string;

    // Sessions first (they make the subscribers), then the service's memory before any socket.
    const tokens: string[] = [];
    for (let i = 0; i < settings.sockets; i++) {
      const session = await post<{ token: string }>(
        `${base}/v1/widgets/session/initialize`,
        {},
        {
          applicationIdentifier,
          subscriberId: `rt-${i}`,
        },
      );
      tokens.push(session.token);
    }
    await sleep(2_000);
    const rssBefore = procStatusKb(child.pid, "VmRSS");
    const heapBefore = await heapUsedKb(base);

    const pending = new Map<string, { at: number; resolve: () => void }>();
    const latencies = new Latencies(settings.triggers);
    for (let i = 0; i < tokens.length; i += 50) {
      await Promise.all(
        tokens.slice(i, i + 50).map(
          (token) =>
            new Promise<void>((resolve, reject) => {
              const socket = io(base, { transports: ["websocket"], reconnection: false, auth: { token } });
              socket.on("notification_received", (data: { message: { content: string } }) => {
                const waiting = pending.get(data.message.content);
                if (!waiting) return;
                latencies.record(performance.now() - waiting.at);
                pending.delete(data.message.content);
                waiting.resolve();
              });
              socket.once("connect", () => resolve());
              socket.once("connect_error", reject);
              sockets.push(socket);
            }),
        ),
      );
    }
    await sleep(3_000);
    const rssWith = procStatusKb(child.pid, "VmRSS");
    const heapWith = await heapUsedKb(base);
    log(`${backend}: ${sockets.length} sockets open; measuring ${settings.triggers} triggers`);

    // Triggers at a steady pace to random subscribers; each timed until its own socket hears of it.
    const arrivals: Promise<void>[] = [];
    const gap = 1000 / Math.max(1, settings.rate);
    const started = performance.now();
    for (let n = 0; n < settings.triggers; n++) {
      const wait = started + n * gap - performance.now();
      if (wait > 0) await sleep(wait);
      const tx = `rt-${n}-${Math.random().toString(36).slice(2)}`;
      const subscriber = Math.floor(Math.random() * settings.sockets);
      arrivals.push(
        new Promise<void>((resolve) => {
          pending.set(tx, { at: performance.now(), resolve });
          void post(`${base}/v1/events/trigger`, auth, {
            name,
            to: `rt-${subscriber}`,
            payload: { tx },
            transactionId: tx,
          });
        }),
      );
    }
    await Promise.race([Promise.all(arrivals), sleep(30_000)]);
    return {
      backend,
      sockets: sockets.length,
      triggers: settings.triggers,
      received: latencies.count,
      latency: latencies.summary(),
      rssBeforeMb: round(rssBefore / 1024, 1),
      rssWithSocketsMb: round(rssWith / 1024, 1),
      kbPerIdleSocket: round((rssWith - rssBefore) / Math.max(1, sockets.length), 1),
      heapKbPerIdleSocket: round((heapWith - heapBefore) / Math.max(1, sockets.length), 1),
    } satisfies RealtimeResult;
  } finally {
    for (const socket of sockets) socket.close();
    await stop?.();
    await db.drop();
  }
}

export async function runRealtimeBench(
  settings: RealtimeSettings = realtimeSettings(),
): Promise<RealtimeResult[]> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-realtime-"));
  const results: RealtimeResult[] = [];
  for (const backend of settings.backends) {
    if (backend === "postgres" && !(await postgresAnswers(settings.databaseUrl))) {
      log(`PostgreSQL SKIPPED: nothing answers at ${redactDatabaseUrl(settings.databaseUrl)}`);
      continue;
    }
    const result = await runBackend(backend, settings, workDir);
    log(JSON.stringify(result));
    results.push(result);
  }
  fs.rmSync(workDir, { recursive: true, force: true });
  return results;
}

export function printRealtime(results: RealtimeResult[]): void {
  if (results.length === 0) return;
  const lines = [
    "",
    "Inbox sockets (one service process, dist/main.js)",
    ...results.flatMap((r) => [
      `  ${r.backend}: ${r.sockets.toLocaleString("en")} idle sockets, one per subscriber:`,
      `    trigger → notification_received: p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms (${r.received} of ${r.triggers}; target p99 ≤ 50 ms)`,
      `    memory: RSS ${r.rssBeforeMb} MB before, ${r.rssWithSocketsMb} MB with the sockets: ${r.kbPerIdleSocket} KB per idle socket (JS heap in use: ${r.heapKbPerIdleSocket} KB per socket)`,
    ]),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, "bench", "realtime.ts")) {
  printRealtime(await runRealtimeBench());
}
