// npm run bench:compare: PUT status of two or more builds, alternated round after round on one
// database per backend, each round with the bare node:http ceiling beside them, so that a change to
// the request path is judged before and after in the same run on the same (shared, noisy) machine.
//
//   BENCH_BUILDS="before=/path/to/other/worktree,after=." npm run bench:compare
//
// Each build is a directory holding a built dist/ (npm run build there first). Per backend and round:
// every build's service in turn (the order rotates each round), then the ceiling; each measured as
// run.ts measures PUT status (32 connections, warm-up, then a window with the service's CPU read
// from /proc around it). Printed: every round, then the medians of req/s, CPU µs per request and
// req/s ÷ the same round's ceiling. BENCH_RATE=<req/s> loads every build at that rate instead (then
// CPU µs per request is the figure to compare). BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2),
// BENCH_BACKENDS, BENCH_DATABASE_URL, BENCH_SERVICE_ENV ("RATE_LIMIT_RPS=1000000,LOG_LEVEL=warn").

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { CapturedResponse } from "./http-ceiling.ts";
import type { LoadResult, LoadSpec } from "./load.ts";
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
import { type BackendName, cliInit, cloneWorkflows, createDatabase, keyIdOf, workflowIds } from "./seed.ts";

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const rounds = num("BENCH_ROUNDS", 5);
const seconds = num("BENCH_SECONDS", 5);
const warmupSeconds = num("BENCH_WARMUP_SECONDS", 2);
const connections = num("BENCH_CONNECTIONS", 32);
// A fixed rate (requests/s) instead of as fast as the service answers: every build then serves the
// same arrivals, and its CPU per request is the cleaner comparison on a busy machine.
const rate = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const backends = (process.env.BENCH_BACKENDS ?? "sqlite,postgres").split(",") as BackendName[];
// name=dir, or name=dir?NAME=value&NAME=value for a build run with settings of its own.
const builds = (process.env.BENCH_BUILDS ?? `current=${ROOT}`).split(",").map((entry) => {
  const [name, spec] = entry.includes("=")
    ? [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]
    : [entry, entry];
  const [dir, query = ""] = spec.split("?") as [string, string?];
  const root = path.resolve(dir);
  if (!fs.existsSync(path.join(root, "dist/main.js")))
    throw new Error(`${root}/dist/main.js: build it first`);
  return { name, root, env: Object.fromEntries(new URLSearchParams(query)) };
});
const serviceEnv = Object.fromEntries(
  (process.env.BENCH_SERVICE_ENV ?? "")
    .split(",")
    .filter(Boolean)
    .map((pair) => pair.split("=") as [string, string]),
);
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-compare-"));
const logFile = path.join(workDir, "processes.log");
const { DATABASE_URL: _u, DATA_DIR: _d, ...baseEnv } = process.env;

function log(message: string) {
  process.stderr.write(`[compare ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function startService(
  { root, env }: { root: string; env: Record<string, string> },
  dbEnv: Record<string, string>,
  port: number,
): Child {
  const out = fs.openSync(logFile, "a");
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, path.join(root, "dist/main.js")], {
    cwd: root,
    env: {
      ...baseEnv,
      ...dbEnv,
      PORT: String(port),
      HOST: "127.0.0.1",
      RATE_LIMIT_RPS: "0",
      LOG_LEVEL: "info",
      ...serviceEnv,
      ...env,
    },
    stdio: ["ignore", out, out],
  });
  fs.closeSync(out);
  const pid = child.pid as number;
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  return {
    process: child,
    pid,
    peakRssMb: () => 0,
    async stop() {
      if (exited) return;
      child.kill("SIGTERM");
      for (let i = 0; i < 100 && !exited; i++) await new Promise((r) => setTimeout(r, 100));
      if (!exited) child.kill("SIGKILL");
    },
  };
}

let counter = 0;
async function load(spec: LoadSpec): Promise<LoadResult> {
  const file = path.join(workDir, `spec-${++counter}.json`);
  fs.writeFileSync(file, JSON.stringify(spec));
  const out = await runNode(["--import", "tsx", "bench/load.ts", file], baseEnv, (spec.seconds + 60) * 1000);
  return JSON.parse(out.trim().split("\n").at(-1) as string) as LoadResult;
}

interface Figures {
  rps: number;
  cpuUs: number;
  failed: number;
}

/** Warm-up, then the window, with the process's CPU read around the window alone. */
async function measure(
  base: Omit<LoadSpec, "start" | "seconds" | "warmupSeconds">,
  pid: number,
  start: number,
) {
  const warm = await load({ ...base, start, warmupSeconds: 0, seconds: warmupSeconds });
  const before = cpuMs(pid);
  const result = await load({ ...base, start: warm.next, warmupSeconds: 0, seconds });
  const cpu = cpuMs(pid) - before;
  const requests = result.measurement.ok + result.measurement.failed;
  const figures: Figures = {
    rps: result.measurement.rps,
    cpuUs: requests > 0 ? Math.round((cpu * 1000) / requests) : 0,
    failed: result.measurement.failed,
  };
  return { figures, next: result.next };
}

function capture(url: string, apiKey: string, body: string): Promise<CapturedResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "PUT", headers: { authorization: `ApiKey ${apiKey}`, "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const headers: [string, string][] = [];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i] as string;
            if (!["date", "connection", "keep-alive", "transfer-encoding"].includes(name.toLowerCase()))
              headers.push([name, res.rawHeaders[i + 1] as string]);
          }
          resolve({
            status: res.statusCode ?? 0,
            headers,
            bodyBase64: Buffer.concat(chunks).toString("base64"),
          });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

async function compareBackend(backend: BackendName) {
  const db = await createDatabase(
    backend,
    workDir,
    process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  );
  try {
    const org = await cliInit(db, "Compare");
    const dev = org.environments.find((e) => e.name === "Development");
    if (!dev) throw new Error("no Development environment");
    const first = builds[0] as (typeof builds)[number];
    const port = await freePort();
    let service = startService(first, db.env, port);
    const url = `http://127.0.0.1:${port}`;
    let captured: CapturedResponse;
    let ids: string[];
    try {
      await waitForHttp(`${url}/health`, service);
      const auth = { authorization: `ApiKey ${dev.apiKey}`, "content-type": "application/json" };
      const groups = (await (await fetch(`${url}/v1/notification-groups`, { headers: auth })).json()) as {
        data: { _id: string }[];
      };
      const created = await fetch(`${url}/v1/workflows`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          name: "Compare welcome",
          notificationGroupId: groups.data[0]?._id,
          description: "A welcome message for new subscribers",
          tags: ["onboarding"],
          steps: [
            {
              template: { type: "email", subject: "Welcome, {{firstName}}", content: "Hello {{firstName}}!" },
            },
          ],
        }),
      });
      const template = ((await created.json()) as { data: { _id: string } }).data._id;
      await cloneWorkflows(db, template, 1, 999);
      ids = await workflowIds(db, dev._id);
      await keyIdOf(db, dev._id);
      captured = await capture(`${url}/v1/workflows/${ids[0]}/status`, dev.apiKey, '{"active":true}');
    } finally {
      await service.stop();
    }
    const base = {
      url: "",
      connections,
      apiKey: dev.apiKey,
      kind: "put-status" as const,
      targets: ids,
      ...(rate ? { overallRate: rate } : {}),
    };
    // Every request switches a workflow: the first turn sets active (already set for ids[0]), then off.
    let start = 1;
    const results = new Map<string, { figures: Figures; ratio: number }[]>();
    const ceilings: Figures[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = builds.map((_, i) => builds[(i + round) % builds.length] as (typeof builds)[number]);
      const roundFigures: [string, Figures][] = [];
      for (const build of order) {
        const p = await freePort();
        service = startService(build, db.env, p);
        try {
          await waitForHttp(`http://127.0.0.1:${p}/health`, service);
          const { figures, next } = await measure(
            { ...base, url: `http://127.0.0.1:${p}` },
            service.pid,
            start,
          );
          start = next;
          roundFigures.push([build.name, figures]);
        } finally {
          await service.stop();
        }
      }
      const cp = await freePort();
      const specFile = path.join(workDir, `ceiling-${++counter}.json`);
      fs.writeFileSync(specFile, JSON.stringify({ ...captured, port: cp }));
      const ceiling = spawnNode(["--import", "tsx", "bench/http-ceiling.ts", specFile], baseEnv, logFile);
      try {
        await waitForHttp(`http://127.0.0.1:${cp}/`, ceiling);
        const { figures } = await measure({ ...base, url: `http://127.0.0.1:${cp}` }, ceiling.pid, 0);
        ceilings.push(figures);
      } finally {
        await ceiling.stop();
      }
      const c = ceilings.at(-1) as Figures;
      const line = roundFigures.map(([name, f]) => {
        const ratio = f.rps / c.rps;
        results.set(name, [...(results.get(name) ?? []), { figures: f, ratio }]);
        return `${name} ${f.rps} req/s ${f.cpuUs} µs ${(ratio * 100).toFixed(1)}%${f.failed ? ` (${f.failed} failed)` : ""}`;
      });
      log(
        `${backend} round ${round + 1}: ${line.join("; ")}; ceiling ${c.rps} req/s ${c.cpuUs} µs; load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")}`,
      );
    }
    const out = [`${backend}: medians of ${rounds} rounds`];
    for (const build of builds) {
      const r = results.get(build.name) ?? [];
      out.push(
        `  ${build.name.padEnd(10)} ${String(median(r.map((x) => x.figures.rps))).padStart(7)} req/s  ` +
          `${String(median(r.map((x) => x.figures.cpuUs))).padStart(5)} µs CPU/req  ÷ ceiling ${(median(r.map((x) => x.ratio)) * 100).toFixed(1)}%`,
      );
    }
    out.push(
      `  ${"ceiling".padEnd(10)} ${String(median(ceilings.map((c) => c.rps))).padStart(7)} req/s  ${String(median(ceilings.map((c) => c.cpuUs))).padStart(5)} µs CPU/req`,
    );
    process.stdout.write(`${out.join("\n")}\n`);
  } finally {
    await db.drop();
  }
}

log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; builds ${builds.map((b) => `${b.name}=${b.root}`).join(", ")}`,
);
for (const backend of backends) await compareBackend(backend);
log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
fs.rmSync(workDir, { recursive: true, force: true });
