// npm run bench [-- --json]: the service under load next to the ceilings it is judged against,
// measured in one run, on SQLite and on PostgreSQL. docs/benchmarks.md describes the scenarios and results.
import { execSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { postgresAnswers, redactDatabaseUrl } from "../src/store/store.ts";
import { BULK_SIZE } from "./bulk.ts";
import type { DbCeilingSpec } from "./db-ceiling.ts";
import { emailThroughput } from "./email.ts";
import { type EngineContext, runFanOut, runTriggers } from "./engine.ts";
import type { CapturedResponse } from "./http-ceiling.ts";
import { idleSettings, idleTargets, printIdle, runIdleBench } from "./idle.ts";
import { type InboxContext, type InboxFigures, inboxSettings, runInbox } from "./inbox.ts";
import type { LoadKind, LoadResult, LoadSpec } from "./load.ts";
import {
  type Child,
  cpuMs,
  freePort,
  ROOT,
  runNode,
  SERVICE_NODE_FLAGS,
  spawnNode,
  waitForHttp,
} from "./proc.ts";
import { printRealtime, realtimeSettings, runRealtimeBench } from "./realtime.ts";
import { type RenderContext, type RenderFigures, renderSettings, runRender } from "./render.ts";
import { type Engine, printReport, printTargets, type Report, type Row, targets } from "./report.ts";
import {
  type BackendName,
  type BenchDatabase,
  cliInit,
  cloneWorkflows,
  createDatabase,
  type Environment,
  keyIdOf,
  seedSubscribers,
  workflowIds,
} from "./seed.ts";
import type { Measurement } from "./stats.ts";
import { printTimers, runTimersBench, timerSettings, timerTargets } from "./timers.ts";
import type { TriggerLoadResult } from "./trigger-load.ts";

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`);
  return value;
}

const SCENARIOS = [
  "put-status",
  "put-status-nocache",
  "get-list",
  "post-group",
  "put-status-1m",
  "get-subscriber",
  "post-subscriber",
  "post-subscriber-bulk",
  "get-subscriber-1m",
  "email",
  "trigger",
  "fan-out",
  "inbox",
  "render",
] as const;
type ScenarioId = (typeof SCENARIOS)[number];

/** The scenarios that run after the big seeding, against the big environment. */
const BIG: readonly ScenarioId[] = ["put-status-1m", "get-subscriber-1m"];
/** The trigger engine's scenarios (bench/engine.ts): environments and services of their own. */
const ENGINE: readonly ScenarioId[] = ["trigger", "fan-out"];
/** Scenarios that create subscribers: they write into an environment of their own. */
const SUBSCRIBER_WRITES: readonly ScenarioId[] = ["post-subscriber", "post-subscriber-bulk"];
/** Not an HTTP load: measured by bench/email.ts. */
const SEPARATE: readonly ScenarioId[] = ["email"];
/** Novu's current inbox (bench/inbox.ts): an environment and services of its own. */
const INBOX: readonly ScenarioId[] = ["inbox"];
/** Runaway templates while /health is probed (bench/render.ts): an environment and a service of its own. */
const RENDER: readonly ScenarioId[] = ["render"];

const settings = {
  seconds: intEnv("BENCH_SECONDS", 8),
  warmupSeconds: intEnv("BENCH_WARMUP_SECONDS", 2),
  halfRateSeconds: intEnv("BENCH_HALF_RATE_SECONDS", 5),
  connections: intEnv("BENCH_CONNECTIONS", 32),
  pgPoolSize: intEnv("BENCH_PG_POOL_SIZE", 10),
  workflows: intEnv("BENCH_WORKFLOWS", 1000),
  bigWorkflows: intEnv("BENCH_BIG_WORKFLOWS", 1_000_000),
  subscribers: intEnv("BENCH_SUBSCRIBERS", 1000),
  bigSubscribers: intEnv("BENCH_BIG_SUBSCRIBERS", 1_000_000),
  emails: intEnv("BENCH_EMAILS", 2000),
  triggerSubscribers: intEnv("BENCH_TRIGGER_SUBSCRIBERS", 10_000),
  triggerBatch: intEnv("BENCH_TRIGGER_BATCH", 5_000),
  fanOutSubscribers: intEnv("BENCH_FANOUT_SUBSCRIBERS", 100_000),
  drainTimeoutSeconds: intEnv("BENCH_DRAIN_TIMEOUT_SECONDS", 120),
  // How long the fan-out may take to write every message (0: as long as it takes); past it, the
  // report gives the messages so far and the time all of them would take at that rate.
  fanOutTimeoutSeconds: intEnv("BENCH_FANOUT_TIMEOUT_SECONDS", 60),
  logLevel: process.env.BENCH_LOG_LEVEL ?? "info",
  databaseUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  backends: (process.env.BENCH_BACKENDS ?? "sqlite,postgres")
    .split(",")
    .map((b) => b.trim()) as BackendName[],
  scenarios: (process.env.BENCH_SCENARIOS ?? SCENARIOS.join(","))
    .split(",")
    .map((s) => s.trim()) as ScenarioId[],
};
const json = process.argv.includes("--json");

const LABELS: Record<ScenarioId, string> = {
  "put-status": "PUT /v1/workflows/{id}/status",
  "put-status-nocache": "  same, KEY_CACHE=off",
  "get-list": "GET /v1/workflows?limit=10",
  "post-group": "POST /v1/notification-groups",
  "put-status-1m": `PUT status, ${settings.bigWorkflows.toLocaleString("en")} workflows`,
  "get-subscriber": `GET /v1/subscribers/{id}, ${settings.subscribers.toLocaleString("en")} subscribers`,
  "post-subscriber": "POST /v1/subscribers (new subscriberId)",
  "post-subscriber-bulk": `POST /v1/subscribers/bulk (${BULK_SIZE} each)`,
  "get-subscriber-1m": `GET /v1/subscribers/{id}, ${settings.bigSubscribers.toLocaleString("en")} subscribers`,
  email: `emails/s: ${settings.emails.toLocaleString("en")} triggers → local SMTP sink`,
  trigger: "POST /v1/events/trigger (1 subscriber)",
  "fan-out": `POST /v1/events/trigger to a topic of ${settings.fanOutSubscribers.toLocaleString("en")}`,
  inbox: "Novu's current inbox: its sockets, its list and counts",
  render: "/health during runaway template renders",
};

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-bench-"));
const logFile = path.join(workDir, "processes.log");
let specCounter = 0;

function log(message: string) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function writeSpec(value: unknown): string {
  const file = path.join(workDir, `spec-${++specCounter}.json`);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}

const TSX = ["--import", "tsx"];

/** The environment for a child process: ours, less any database of our own, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...rest } = process.env;
  return { ...rest, ...extra };
}

interface Service {
  child: Child;
  url: string;
}

async function startService(db: BenchDatabase, extra: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const child = spawnNode(
    // BENCH_SERVICE_NODE_FLAGS: more node flags for the services, e.g. "--cpu-prof --cpu-prof-dir=DIR"
    // to see where a scenario's CPU goes (bench/cpu-profile.ts reads the files).
    [
      ...SERVICE_NODE_FLAGS,
      ...(process.env.BENCH_SERVICE_NODE_FLAGS ?? "").split(" ").filter(Boolean),
      "dist/main.js",
    ],
    childEnv({
      ...db.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      RATE_LIMIT_RPS: "0",
      LOG_LEVEL: settings.logLevel,
      PG_POOL_SIZE: String(settings.pgPoolSize),
      ...extra,
    }),
    logFile,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, child);
  return { child, url };
}

/** One request, answered with its status, raw headers and body bytes. */
function request(
  url: string,
  method: string,
  apiKey: string,
  body?: unknown,
): Promise<{ status: number; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        headers: {
          authorization: `ApiKey ${apiKey}`,
          ...(payload ? { "content-type": "application/json" } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

async function json2xx<T>(url: string, method: string, apiKey: string, body?: unknown): Promise<T> {
  const res = await request(url, method, apiKey, body);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body.toString()}`);
  return JSON.parse(res.body.toString()) as T;
}

const NODE_SETS = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

async function capture(
  url: string,
  method: string,
  apiKey: string,
  body?: unknown,
): Promise<CapturedResponse> {
  const res = await request(url, method, apiKey, body);
  if (res.status >= 300) throw new Error(`capture ${method} ${url}: ${res.status} ${res.body.toString()}`);
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i] as string;
    if (!NODE_SETS.has(name.toLowerCase())) headers.push([name, res.rawHeaders[i + 1] as string]);
  }
  return { status: res.status, headers, bodyBase64: res.body.toString("base64") };
}

/** A load process; BENCH_CONNECTIONS connections unless the spec says otherwise. */
async function load(spec: Omit<LoadSpec, "connections"> & { connections?: number }): Promise<LoadResult> {
  const file = writeSpec({ connections: settings.connections, ...spec });
  const timeout = (spec.warmupSeconds + spec.seconds + 60) * 1000;
  const out = await runNode([...TSX, "bench/load.ts", file], childEnv({}), timeout);
  return JSON.parse(out.trim().split("\n").at(-1) as string) as LoadResult;
}

/** Triggers with their send times, from a process of their own (bench/trigger-load.ts). */
async function triggerLoad(
  spec: Parameters<EngineContext["triggerLoad"]>[0],
  service: Service,
  apiKey: string,
): Promise<TriggerLoadResult> {
  const file = writeSpec({ ...spec, url: service.url, apiKey, connections: settings.connections });
  const timeout = ((spec.seconds ?? 0) + settings.drainTimeoutSeconds + 60) * 1000;
  const out = await runNode([...TSX, "bench/trigger-load.ts", file], childEnv({}), timeout);
  return JSON.parse(out.trim().split("\n").at(-1) as string) as TriggerLoadResult;
}

/**
 * Warm-up, then the measured window, each a load process of its own, so that the server's CPU time
 * (user + system, from /proc) can be read around the measured window alone.
 */
async function measure(
  spec: Omit<LoadSpec, "connections" | "warmupSeconds" | "seconds">,
  pid: number,
  warmupSeconds: number,
  seconds: number,
): Promise<LoadResult & { cpuUsPerRequest: number }> {
  let start = spec.start;
  if (warmupSeconds > 0)
    start = (await load({ ...spec, start, warmupSeconds: 0, seconds: warmupSeconds })).next;
  const cpuBefore = cpuMs(pid);
  const result = await load({ ...spec, start, warmupSeconds: 0, seconds });
  const cpu = cpuMs(pid) - cpuBefore;
  const requests = result.measurement.ok + result.measurement.failed;
  return { ...result, cpuUsPerRequest: requests > 0 ? Math.round((cpu * 1000) / requests) : 0 };
}

async function httpCeiling(kind: LoadKind, captured: CapturedResponse, targets: string[], apiKey: string) {
  const port = await freePort();
  const child = spawnNode(
    [...TSX, "bench/http-ceiling.ts", writeSpec({ ...captured, port })],
    childEnv({}),
    logFile,
  );
  try {
    await waitForHttp(`http://127.0.0.1:${port}/`, child);
    const result = await measure(
      { url: `http://127.0.0.1:${port}`, apiKey, kind, targets, start: 0 },
      child.pid,
      settings.warmupSeconds,
      settings.seconds,
    );
    return {
      ...result.measurement,
      peakRssMb: Math.round(child.peakRssMb()),
      cpuUsPerRequest: result.cpuUsPerRequest,
    };
  } finally {
    await child.stop();
  }
}

async function dbCeiling(
  db: BenchDatabase,
  env: Environment,
  ids: string[],
  batch: number,
): Promise<Measurement> {
  const spec: DbCeilingSpec = {
    backend: db.backend,
    ...(db.sqliteFile ? { sqliteFile: db.sqliteFile } : {}),
    ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}),
    poolSize: settings.pgPoolSize,
    concurrency: settings.connections,
    batch,
    warmupSeconds: settings.warmupSeconds,
    seconds: settings.seconds,
    environmentId: env.id,
    keyId: env.keyId,
    ids,
    start: counters.get(env.id) ?? 0,
  };
  const timeout = (settings.warmupSeconds + settings.seconds + 60) * 1000;
  const out = await runNode([...TSX, "bench/db-ceiling.ts", writeSpec(spec)], childEnv({}), timeout);
  const result = JSON.parse(out.trim().split("\n").at(-1) as string) as Measurement & { next: number };
  counters.set(env.id, result.next);
  return result;
}

/** Where each workflow's on/off alternation stands, per environment, across runs. */
const counters = new Map<string, number>();

interface ScenarioRun {
  service: Measurement & { peakRssMb: number; cpuUsPerRequest: number; statusCodes: Record<string, number> };
  halfRate?: Measurement & { rate: number; autocannonP99: number };
  captured: CapturedResponse;
  targets: string[];
  kind: LoadKind;
  note?: string;
}

async function runScenario(
  db: BenchDatabase,
  scenario: ScenarioId,
  env: Environment,
  ids: string[],
): Promise<ScenarioRun> {
  const service = await startService(db, scenario === "put-status-nocache" ? { KEY_CACHE: "off" } : {});
  try {
    let kind: LoadKind;
    let targets: string[];
    let captured: CapturedResponse;
    let note: string | undefined;
    if (scenario === "get-list") {
      kind = "get";
      const list = await request(`${service.url}/v1/workflows?limit=10`, "GET", env.apiKey);
      const listed = list.status === 200 && Array.isArray(JSON.parse(list.body.toString()).data);
      if (listed) {
        targets = ["/v1/workflows?limit=10"];
      } else {
        // The list route is not there yet: read one workflow by id instead, and say so.
        targets = ids.slice(0, 100).map((id) => `/v1/workflows/${id}`);
        note = "GET /v1/workflows?limit=10 is not served by this build: measured GET /v1/workflows/{id}";
      }
      captured = await capture(`${service.url}${targets[0]}`, "GET", env.apiKey);
    } else if (scenario === "get-subscriber" || scenario === "get-subscriber-1m") {
      kind = "get";
      targets = ids.map((id) => `/v1/subscribers/${encodeURIComponent(id)}`);
      captured = await capture(`${service.url}${targets[0]}`, "GET", env.apiKey);
    } else if (scenario === "post-subscriber") {
      kind = "post-subscriber";
      targets = [];
      captured = await capture(`${service.url}/v1/subscribers`, "POST", env.apiKey, {
        subscriberId: `bench-capture-${Date.now()}`,
        firstName: "Bench",
        lastName: "User",
        email: "capture@example.com",
        data: { plan: "pro" },
      });
    } else if (scenario === "post-subscriber-bulk") {
      kind = "post-subscriber-bulk";
      targets = [];
      const tag = Date.now();
      captured = await capture(`${service.url}/v1/subscribers/bulk`, "POST", env.apiKey, {
        subscribers: Array.from({ length: BULK_SIZE }, (_, j) => ({
          subscriberId: `bulk-capture-${tag}-${j}`,
          firstName: "Bench",
          email: `c${j}@example.com`,
        })),
      });
      note = `${BULK_SIZE} subscribers per request`;
    } else if (scenario === "post-group") {
      kind = "post-group";
      targets = [];
      captured = await capture(`${service.url}/v1/notification-groups`, "POST", env.apiKey, {
        name: `Bench capture ${Date.now()}`,
      });
    } else {
      kind = "put-status";
      targets = ids;
      const start = counters.get(env.id) ?? 0;
      // The capture switches the workflow the next request would, as that request would.
      const active = Math.floor(start / ids.length) % 2 === 0;
      const capturedId = ids[start % ids.length] as string;
      captured = await capture(`${service.url}/v1/workflows/${capturedId}/status`, "PUT", env.apiKey, {
        active,
      });
      counters.set(env.id, start + 1);
    }
    const base = { url: service.url, apiKey: env.apiKey, kind, targets };
    const full = await measure(
      { ...base, start: counters.get(env.id) ?? 0 },
      service.child.pid,
      settings.warmupSeconds,
      settings.seconds,
    );
    if (kind === "put-status") counters.set(env.id, full.next);
    let halfRate: ScenarioRun["halfRate"];
    if (settings.halfRateSeconds > 0 && scenario !== "put-status-nocache" && full.measurement.rps > 0) {
      const rate = Math.max(1, Math.floor(full.measurement.rps / 2));
      const half = await load({
        ...base,
        warmupSeconds: 0,
        seconds: settings.halfRateSeconds,
        overallRate: rate,
        start: counters.get(env.id) ?? 0,
      });
      if (kind === "put-status") counters.set(env.id, half.next);
      halfRate = { ...half.measurement, rate, autocannonP99: half.autocannonP99 };
    }
    return {
      service: {
        ...full.measurement,
        peakRssMb: Math.round(service.child.peakRssMb()),
        cpuUsPerRequest: full.cpuUsPerRequest,
        statusCodes: full.statusCodes,
      },
      ...(halfRate ? { halfRate } : {}),
      captured,
      targets,
      kind,
      ...(kind === "post-subscriber-bulk"
        ? {
            note:
              `${BULK_SIZE} subscribers per request: ` +
              `${(full.measurement.rps * BULK_SIZE).toLocaleString("en")} subscribers/s`,
          }
        : note
          ? { note }
          : {}),
    };
  } finally {
    await service.child.stop();
  }
}

async function environmentOf(db: BenchDatabase, name: string): Promise<Environment> {
  const org = await cliInit(db, name);
  const dev = org.environments.find((e) => e.name === "Development");
  if (!dev) throw new Error("the CLI made no Development environment");
  return { id: dev._id, apiKey: dev.apiKey, keyId: await keyIdOf(db, dev._id) };
}

/** A workflow made through the API (so it is valid by construction), to be cloned in bulk. */
async function templateWorkflow(service: Service, env: Environment, name: string): Promise<string> {
  const groups = await json2xx<{ data: { _id: string }[] }>(
    `${service.url}/v1/notification-groups`,
    "GET",
    env.apiKey,
  );
  const group = groups.data[0];
  if (!group) throw new Error("the environment has no notification group");
  const created = await json2xx<{ data: { _id: string } }>(
    `${service.url}/v1/workflows`,
    "POST",
    env.apiKey,
    {
      name,
      notificationGroupId: group._id,
      description: "A welcome message for new subscribers",
      tags: ["onboarding"],
      steps: [
        { template: { type: "email", subject: "Welcome, {{firstName}}", content: "Hello {{firstName}}!" } },
      ],
    },
  );
  return created.data._id;
}

/**
 * The trigger engine's scenarios measure throughput past the quotas as they ship (20,000 recipients
 * a minute, 10,000 a trigger): they run with the quotas raised, still counted, out of their way.
 */
const ENGINE_QUOTAS = {
  QUOTA_RECIPIENTS_PER_TRIGGER: String(Math.max(10_000, settings.fanOutSubscribers)),
  QUOTA_RECIPIENTS_PER_MINUTE: "100000000",
};

const engineContext: EngineContext = {
  settings,
  log,
  startService: (db) => startService(db, ENGINE_QUOTAS),
  environmentOf,
  request,
  measure,
  triggerLoad,
};

const renderContext: RenderContext = {
  settings: renderSettings(intEnv),
  log,
  startService: (db, extra) => startService(db, extra),
  environmentOf,
};

const inboxContext: InboxContext = {
  settings: inboxSettings(intEnv),
  log,
  startService: (db) => startService(db),
  environmentOf,
  measure,
  load,
};

async function runBackend(
  backend: BackendName,
  rows: Row[],
  engine: Required<Engine>,
  seeding: Record<string, number>,
  inbox: InboxFigures[],
  render: RenderFigures[],
) {
  log(`${backend}: fresh database`);
  const db = await createDatabase(backend, workDir, settings.databaseUrl);
  try {
    const small = await environmentOf(db, "Bench");
    const big = await environmentOf(db, "Bench big");
    const seedService = await startService(db);
    let templates: [string, string];
    try {
      templates = [
        await templateWorkflow(seedService, small, "Bench welcome"),
        await templateWorkflow(seedService, big, "Bench welcome"),
      ];
    } finally {
      await seedService.child.stop();
    }
    seeding[`${backend} ${settings.workflows}`] = await cloneWorkflows(
      db,
      templates[0],
      1,
      settings.workflows - 1,
    );
    const smallIds = await workflowIds(db, small.id);
    log(`${backend}: ${smallIds.length} workflows seeded`);

    const ceilings = new Map<
      LoadKind | "get-list",
      Measurement & { peakRssMb: number; cpuUsPerRequest: number }
    >();
    const emit = (scenario: ScenarioId, run: ScenarioRun, dbCeil?: Measurement, httpKey?: string) => {
      const http = ceilings.get((httpKey ?? run.kind) as LoadKind);
      rows.push({
        scenario,
        label: LABELS[scenario],
        backend,
        service: run.service,
        ...(run.halfRate ? { halfRate: run.halfRate } : {}),
        ...(http ? { httpCeiling: http } : {}),
        ...(dbCeil ? { dbCeiling: dbCeil } : {}),
        ...(run.note ? { note: run.note } : {}),
      });
    };

    const subscriberIds = (count: number, step = 1) =>
      Array.from({ length: Math.floor(count / step) }, (_, i) => `bench-${(i + 1) * step}`);
    let writes: Environment | undefined;
    if (settings.scenarios.includes("get-subscriber")) {
      seeding[`${backend} ${settings.subscribers} subscribers`] = await seedSubscribers(
        db,
        small.id,
        1,
        settings.subscribers,
      );
    }
    // Reads first: the writes below grow the table, and the small figure is for a small table.
    const smallScenarios = settings.scenarios
      .filter(
        (s) =>
          !BIG.includes(s) &&
          !SEPARATE.includes(s) &&
          !ENGINE.includes(s) &&
          !INBOX.includes(s) &&
          !RENDER.includes(s),
      )
      .sort((a, b) => Number(a !== "get-subscriber") - Number(b !== "get-subscriber"));
    const pending: [ScenarioId, ScenarioRun][] = [];
    for (const scenario of smallScenarios) {
      log(`${backend}: ${scenario}`);
      let env = small;
      let ids = smallIds;
      if (scenario === "get-subscriber") ids = subscriberIds(settings.subscribers);
      if (SUBSCRIBER_WRITES.includes(scenario)) {
        writes ??= await environmentOf(db, "Bench subscriber writes");
        env = writes;
      }
      const run = await runScenario(db, scenario, env, ids);
      const key = scenario === "get-list" ? "get-list" : run.kind;
      if (!ceilings.has(key as LoadKind) && scenario !== "put-status-nocache") {
        log(`${backend}: HTTP ceiling for ${scenario}`);
        ceilings.set(key as LoadKind, await httpCeiling(run.kind, run.captured, run.targets, env.apiKey));
      }
      pending.push([scenario, run]);
    }
    let dbSmall: Measurement | undefined;
    let batched: Measurement | undefined;
    if (smallScenarios.some((s) => s.startsWith("put-status"))) {
      log(`${backend}: database ceiling`);
      dbSmall = await dbCeiling(db, small, smallIds, 1);
      if (backend === "sqlite") batched = await dbCeiling(db, small, smallIds, settings.connections);
    }
    for (const [scenario, run] of pending) {
      const httpKey = scenario === "get-list" ? "get-list" : undefined;
      emit(scenario, run, scenario.startsWith("put-status") ? dbSmall : undefined, httpKey);
    }
    if (batched) {
      rows.push({
        scenario: "db-batched",
        label: `  DB ceiling batched, ${settings.connections} per COMMIT`,
        backend,
        dbCeiling: batched,
        note: "the database ceiling with one COMMIT (one fsync) per batch, as group commit does",
      });
    }

    if (settings.scenarios.includes("put-status-1m")) {
      log(`${backend}: seeding ${settings.bigWorkflows} workflows`);
      seeding[`${backend} ${settings.bigWorkflows}`] = await cloneWorkflows(
        db,
        templates[1],
        settings.workflows + 1,
        settings.bigWorkflows - 1,
      );
      const bigIds = await workflowIds(
        db,
        big.id,
        Math.max(1, Math.floor(settings.bigWorkflows / settings.workflows)),
      );
      log(`${backend}: put-status-1m (${bigIds.length} of the ${settings.bigWorkflows} workflows switched)`);
      const run = await runScenario(db, "put-status-1m", big, bigIds);
      if (!ceilings.has("put-status")) {
        ceilings.set("put-status", await httpCeiling(run.kind, run.captured, run.targets, big.apiKey));
      }
      log(`${backend}: database ceiling, ${settings.bigWorkflows} workflows`);
      emit("put-status-1m", run, await dbCeiling(db, big, bigIds, 1));
    }

    if (settings.scenarios.includes("get-subscriber-1m")) {
      log(`${backend}: seeding ${settings.bigSubscribers} subscribers`);
      seeding[`${backend} ${settings.bigSubscribers} subscribers`] = await seedSubscribers(
        db,
        big.id,
        1,
        settings.bigSubscribers,
      );
      // A thousand subscribers spread over the whole range, read in turn.
      const targets = subscriberIds(
        settings.bigSubscribers,
        Math.max(1, Math.floor(settings.bigSubscribers / 1000)),
      );
      log(
        `${backend}: get-subscriber-1m (${targets.length} of the ${settings.bigSubscribers} subscribers read)`,
      );
      const run = await runScenario(db, "get-subscriber-1m", big, targets);
      if (!ceilings.has("get"))
        ceilings.set("get", await httpCeiling(run.kind, run.captured, run.targets, big.apiKey));
      emit("get-subscriber-1m", run, undefined, "get");
    }

    if (settings.scenarios.includes("email")) {
      log(`${backend}: email (${settings.emails} emails to a local SMTP sink)`);
      const env = await environmentOf(db, "Bench email");
      const service = await startService(db);
      try {
        const { connections, cpuUsPerEmail, ...run } = await emailThroughput(
          service.url,
          service.child.pid,
          env.apiKey,
          settings.emails,
        );
        rows.push({
          scenario: "email",
          label: LABELS.email,
          backend,
          service: {
            ...run,
            peakRssMb: Math.round(service.child.peakRssMb()),
            cpuUsPerRequest: cpuUsPerEmail,
            statusCodes: {},
          },
          note: `emails/s in the req/s column; p50/p99: trigger to arrival; ${connections} SMTP connections (pooled)`,
        });
      } finally {
        await service.child.stop();
      }
    }
    if (settings.scenarios.includes("inbox")) inbox.push(await runInbox(inboxContext, db, backend, seeding));
    if (settings.scenarios.includes("render")) render.push(await runRender(renderContext, db, backend));
    // The trigger engine last: a fan-out cut short by its time limit leaves queued work behind,
    // which no later service of this database may find and run.
    if (settings.scenarios.includes("trigger")) {
      log(`${backend}: trigger`);
      const { row, figures } = await runTriggers(engineContext, db, backend, seeding);
      rows.push(row);
      engine.triggers.push(figures);
    }
    if (settings.scenarios.includes("fan-out")) {
      log(`${backend}: seeding a topic of ${settings.fanOutSubscribers} subscribers`);
      engine.fanOut.push(await runFanOut(engineContext, db, backend, seeding));
    }
  } finally {
    await db.drop();
  }
}

function machine() {
  const sh = (cmd: string) => {
    try {
      return execSync(cmd, { encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  };
  return {
    nproc: sh("nproc"),
    memory: sh('free -h | awk \'/^Mem:/ {print $2 " total, " $7 " available"}\''),
    cpu: os.cpus()[0]?.model ?? "",
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

async function main() {
  const started = performance.now();
  if (process.env.BENCH_SKIP_BUILD !== "1") {
    log("building dist/");
    const built = spawnSync("npm", ["run", "-s", "build"], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (built.status !== 0) throw new Error("npm run build failed");
  }
  if (settings.backends.includes("postgres") && !(await postgresAnswers(settings.databaseUrl))) {
    if (process.env.BENCH_BACKENDS)
      throw new Error(`PostgreSQL does not answer at ${redactDatabaseUrl(settings.databaseUrl)}`);
    log(
      `PostgreSQL SKIPPED: nothing answers at ${redactDatabaseUrl(settings.databaseUrl)} (set BENCH_DATABASE_URL)`,
    );
    settings.backends = settings.backends.filter((b) => b !== "postgres");
  }
  const before = machine();
  const rows: Row[] = [];
  const seeding: Record<string, number> = {};
  const engine: Required<Engine> = { triggers: [], fanOut: [] };
  const inbox: InboxFigures[] = [];
  const render: RenderFigures[] = [];
  for (const backend of settings.backends) await runBackend(backend, rows, engine, seeding, inbox, render);
  const report: Report = {
    machine: { ...before, loadAverageAfter: machine().loadAverage },
    settings: {
      ...settings,
      ...(inbox.length > 0 ? { inbox: inboxContext.settings } : {}),
      ...(render.length > 0 ? { render: renderContext.settings } : {}),
    },
    seedingSeconds: Object.fromEntries(Object.entries(seeding).map(([k, v]) => [k, Math.round(v * 10) / 10])),
    rows,
    engine,
    ...(inbox.length > 0 ? { inbox } : {}),
    ...(render.length > 0 ? { render } : {}),
    totalSeconds: Math.round((performance.now() - started) / 1000),
  };
  printReport(report, json);
  // Delays and digest windows (bench/timers.ts); BENCH_TIMERS=0 leaves them out.
  const timers =
    process.env.BENCH_TIMERS === "0"
      ? []
      : await runTimersBench({ ...timerSettings(), backends: settings.backends });
  if (!json) printTimers(timers);
  // The inbox's sockets (bench/realtime.ts); BENCH_REALTIME=0 leaves them out.
  const realtime =
    process.env.BENCH_REALTIME === "0"
      ? []
      : await runRealtimeBench({ ...realtimeSettings(), backends: settings.backends });
  if (!json) printRealtime(realtime);
  // A service at rest (bench/idle.ts); BENCH_IDLE=0 leaves it out.
  const idle =
    process.env.BENCH_IDLE === "0"
      ? []
      : await runIdleBench({ ...idleSettings(), backends: settings.backends });
  if (!json) printIdle(idle);
  const later = [...timerTargets(timers), ...idleTargets(idle)];
  if (!json) printTargets("Timers and rest, judged:", later);
  // BENCH_JSON_OUT: the JSON report as well, to a file (the table still on stdout).
  if (process.env.BENCH_JSON_OUT)
    fs.writeFileSync(
      process.env.BENCH_JSON_OUT,
      JSON.stringify(
        {
          ...report,
          targets: [...targets(report.rows, report.engine, report.inbox, report.render), ...later],
          timers,
          realtime,
          idle,
        },
        null,
        2,
      ),
    );
  fs.rmSync(workDir, { recursive: true, force: true });
}

try {
  await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  log(`process output is in ${logFile}`);
  process.exit(1);
}
