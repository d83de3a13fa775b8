// npm run bench:profile: the PUT status scenario on each backend with the service under
// `node --cpu-prof`, then where its CPU time went: self time by function and by package/file.
// The .cpuprofile files are kept (BENCH_PROFILE_DIR, default $TMPDIR/tidings-profiles) for a flame graph
// (open them in Chrome DevTools' Performance panel, or speedscope). The summary keeps to the measured
// window (BENCH_SECONDS, after BENCH_WARMUP_SECONDS of warm-up), with each line's µs per request.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { monotonicUs, summarize, summarizeAllocations, type Window } from "./cpu-profile.ts";
import type { LoadResult, LoadSpec } from "./load.ts";
import { freePort, runNode, SERVICE_NODE_FLAGS, spawnNode, waitForHttp } from "./proc.ts";
import {
  type BackendName,
  cliInit,
  cloneWorkflows,
  createDatabase,
  keyIdOf,
  seedSubscribers,
  workflowIds,
} from "./seed.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
/**
 * What load to profile: put-status (default), get-list, or trigger (an active workflow with one in-app
 * step, each trigger to one of 10,000 subscribers, as the trigger bench sends them).
 */
const profileKind = process.env.BENCH_PROFILE_KIND ?? "put-status";
if (profileKind !== "put-status" && profileKind !== "get-list" && profileKind !== "trigger") {
  throw new Error(`BENCH_PROFILE_KIND must be put-status, get-list or trigger, got "${profileKind}"`);
}
const TRIGGER_SUBSCRIBERS = 10_000;
/**
 * BENCH_PROFILE_ALLOC=1: also what the service allocates per request in the measured window
 * (bench/alloc-sampler.mjs), which unlike CPU time does not move with the machine's other load.
 */
const profileAllocations = process.env.BENCH_PROFILE_ALLOC === "1";
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const backends = (process.env.BENCH_BACKENDS ?? "sqlite,postgres").split(",") as BackendName[];
const profileDir = path.resolve(process.env.BENCH_PROFILE_DIR ?? path.join(os.tmpdir(), "tidings-profiles"));
const extraEnv = Object.fromEntries(
  (process.env.BENCH_SERVICE_ENV ?? "")
    .split(",")
    .filter(Boolean)
    .map((pair) => pair.split("=") as [string, string]),
);
/** The build to profile (a directory holding dist/): this checkout's unless BENCH_BUILD names another. */
const build = path.resolve(process.env.BENCH_BUILD ?? ".");
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-profile-"));
const logFile = path.join(workDir, "processes.log");

async function runLoad(
  backend: BackendName,
  name: string,
  spec: LoadSpec,
  env: NodeJS.ProcessEnv,
): Promise<LoadResult> {
  const file = path.join(workDir, `${backend}-${name}.json`);
  fs.writeFileSync(file, JSON.stringify(spec));
  const out = await runNode(["--import", "tsx", "bench/load.ts", file], env, (spec.seconds + 60) * 1000);
  return JSON.parse(out.trim().split("\n").at(-1) as string) as LoadResult;
}

async function profileBackend(backend: BackendName) {
  const db = await createDatabase(
    backend,
    workDir,
    process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  );
  try {
    const org = await cliInit(db, "Profile");
    const dev = org.environments.find((e) => e.name === "Development");
    if (!dev) throw new Error("no Development environment");
    const port = await freePort();
    const dir = path.join(profileDir, backend);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const { DATABASE_URL: _u, DATA_DIR: _d, ...env } = process.env;
    const allocFile = path.join(dir, "allocations.json");
    const child = spawnNode(
      [
        ...SERVICE_NODE_FLAGS,
        "--cpu-prof",
        `--cpu-prof-dir=${dir}`,
        ...(profileAllocations
          ? ["--import", fileURLToPath(new URL("./alloc-sampler.mjs", import.meta.url))]
          : []),
        path.join(build, "dist/main.js"),
      ],
      {
        ...env,
        ...db.env,
        ...(profileAllocations ? { BENCH_ALLOC_FILE: allocFile } : {}),
        PORT: String(port),
        HOST: "127.0.0.1",
        RATE_LIMIT_RPS: "0",
        // The trigger load reaches more subscribers a minute than the default quota allows.
        QUOTA_RECIPIENTS_PER_MINUTE: "100000000",
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
        ...extraEnv,
      },
      logFile,
    );
    const url = `http://127.0.0.1:${port}`;
    let requests: number | undefined;
    let window: Window | undefined;
    try {
      await waitForHttp(`${url}/health`, child);
      const auth = { authorization: `ApiKey ${dev.apiKey}`, "content-type": "application/json" };
      const groups = (await (await fetch(`${url}/v1/notification-groups`, { headers: auth })).json()) as {
        data: { _id: string }[];
      };
      const createWorkflow = async (workflow: Record<string, unknown>) =>
        (
          (await (
            await fetch(`${url}/v1/workflows`, {
              method: "POST",
              headers: auth,
              body: JSON.stringify({ notificationGroupId: groups.data[0]?._id, ...workflow }),
            })
          ).json()) as { data: { _id: string; triggers: { identifier: string }[] } }
        ).data;
      const template = (
        await createWorkflow({
          name: "Profile welcome",
          steps: [{ template: { type: "email", subject: "Welcome, {{firstName}}", content: "Hello!" } }],
        })
      )._id;
      await cloneWorkflows(db, template, 1, 999);
      const ids = await workflowIds(db, dev._id);
      await keyIdOf(db, dev._id);
      let triggerName: string | undefined;
      if (profileKind === "trigger") {
        await seedSubscribers(db, dev._id, 1, TRIGGER_SUBSCRIBERS);
        const inApp = await createWorkflow({
          name: "Profile in-app",
          active: true,
          steps: [
            { template: { type: "in_app", content: "Hello {{subscriber.firstName}}, event {{payload.n}}" } },
          ],
        });
        triggerName = inApp.triggers[0]?.identifier;
        if (!triggerName) throw new Error("the in-app workflow has no trigger identifier");
      }
      const spec: LoadSpec = {
        url,
        connections,
        warmupSeconds: 0,
        seconds: warmupSeconds,
        apiKey: dev.apiKey,
        kind: profileKind === "get-list" ? "get" : profileKind === "trigger" ? "trigger" : "put-status",
        targets:
          profileKind === "get-list"
            ? ["/v1/workflows?limit=10"]
            : profileKind === "trigger"
              ? Array.from({ length: TRIGGER_SUBSCRIBERS }, (_, i) => `bench-${i + 1}`)
              : ids,
        ...(triggerName ? { name: triggerName } : {}),
        start: 0,
      };
      // The warm-up and the measured window are loads of their own, so that the summary can keep
      // to the window: start-up and the JIT's first minutes are no request's cost.
      const warm = await runLoad(backend, "warm-up", spec, env);
      // The allocation profile starts afresh with the window.
      if (profileAllocations) process.kill(child.pid, "SIGWINCH");
      const startUs = monotonicUs();
      const measured = await runLoad(backend, "window", { ...spec, seconds, start: warm.next }, env);
      window = { startUs, endUs: monotonicUs() };
      process.stdout.write(
        `\n== ${backend}: ${JSON.stringify(measured.measurement)} ${JSON.stringify(measured.statusCodes)}; window ${window.startUs}-${window.endUs} µs\n`,
      );
      requests = measured.measurement.ok + measured.measurement.failed;
    } finally {
      await child.stop();
    }
    const profiles = fs.readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    for (const p of profiles)
      process.stdout.write(`${path.join(dir, p)}\n${summarize(path.join(dir, p), requests, 30, window)}\n`);
    if (profileAllocations) process.stdout.write(`${allocFile}\n${summarizeAllocations(allocFile)}\n`);
  } finally {
    await db.drop();
  }
}

for (const backend of backends) await profileBackend(backend);
fs.rmSync(workDir, { recursive: true, force: true });
