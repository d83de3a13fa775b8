// npm run bench:bridge: what running a workflow's step through a code-first app's bridge costs. One
// service (SQLite, or PostgreSQL with BENCH_BACKEND=postgres and BENCH_DATABASE_URL as the admin URL),
// one @novu/framework app in a process of its own (bench/bridge-app.ts), and two one-step in-app
// workflows: one stored, one defined in code. Each gets the same open-loop load (BENCH_BRIDGE_RATE
// triggers a second for BENCH_BRIDGE_SECONDS), one after the other in the same run, and each trigger is
// timed from when it was due to when its message was written (trigger → feed).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Child, freePort, runNode, SERVICE_NODE_FLAGS, spawnNode, waitForHttp } from "./proc.ts";
import { type BackendName, cliInit, createDatabase, epochMs, openReader } from "./seed.ts";
import { Latencies } from "./stats.ts";
import type { TriggerLoadResult } from "./trigger-load.ts";

const rate = Number(process.env.BENCH_BRIDGE_RATE ?? 50);
const seconds = Number(process.env.BENCH_BRIDGE_SECONDS ?? 10);
const backend = (process.env.BENCH_BACKEND ?? "sqlite") as BackendName;
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "";
const TSX = ["--import", "tsx"];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...rest } = process.env;
  return { ...rest, ...extra };
}

async function api<T>(url: string, method: string, apiKey: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `ApiKey ${apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

async function main() {
  if (!fs.existsSync("dist/main.js")) throw new Error("build first: npm run build");
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-bench-bridge-"));
  const logFile = path.join(workDir, "service.log");
  const db = await createDatabase(backend, workDir, adminUrl);
  const children: Child[] = [];
  try {
    const org = await cliInit(db, "Bridge bench");
    const env = org.environments.find((e) => e.name === "Development");
    if (!env) throw new Error("no Development environment");
    const port = await freePort();
    const service = spawnNode(
      [...SERVICE_NODE_FLAGS, "dist/main.js"],
      childEnv({
        ...db.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        RATE_LIMIT_RPS: "0",
        LOG_LEVEL: "warn",
        TIDINGS_OUTBOUND_ALLOW: "127.0.0.1",
      }),
      logFile,
    );
    children.push(service);
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/health`, service);
    const bridgePort = await freePort();
    const app = spawnNode(
      [...TSX, "bench/bridge-app.ts"],
      childEnv({ PORT: String(bridgePort), BRIDGE_SECRET_KEY: env.apiKey }),
      path.join(workDir, "bridge.log"),
    );
    children.push(app);
    for (
      let i = 0;
      i < 100 && !fs.readFileSync(path.join(workDir, "bridge.log"), "utf8").includes("ready");
      i++
    )
      await sleep(100);

    const groups = await api<{ data: { _id: string }[] }>(`${url}/v1/notification-groups`, "GET", env.apiKey);
    const stored = await api<{ data: { triggers: { identifier: string }[] } }>(
      `${url}/v1/workflows`,
      "POST",
      env.apiKey,
      {
        name: "Bench stored",
        notificationGroupId: groups.data[0]?._id,
        active: true,
        steps: [
          { template: { type: "in_app", content: "Hello {{subscriber.firstName}}, event {{payload.n}}" } },
        ],
      },
    );
    await api(`${url}/v1/bridge/sync?source=bench`, "POST", env.apiKey, {
      bridgeUrl: `http://127.0.0.1:${bridgePort}/api/novu`,
    });
    const subscribers = Array.from({ length: 100 }, (_, i) => `bench-sub-${i}`);
    const reader = openReader(db);
    const results: string[] = [];
    for (const [label, name] of [
      ["stored", stored.data.triggers[0]?.identifier ?? ""],
      ["code (bridge)", "bench-code"],
    ] as const) {
      const tag = `${label.startsWith("code") ? "code" : "stored"}-${randomBytes(3).toString("hex")}`;
      const spec = path.join(workDir, `${tag}.json`);
      fs.writeFileSync(
        spec,
        JSON.stringify({
          url,
          apiKey: env.apiKey,
          name,
          subscribers,
          start: 0,
          tag,
          connections: 16,
          mode: "rate",
          rate,
          seconds,
        }),
      );
      const out = await runNode(
        [...TSX, "bench/trigger-load.ts", spec],
        childEnv({}),
        (seconds + 120) * 1000,
      );
      const load = JSON.parse(out.trim().split("\n").at(-1) as string) as TriggerLoadResult;
      let rows: { transaction_id: string; created_at: unknown }[] = [];
      for (let i = 0; i < 600; i++) {
        rows = await reader.all(
          "select transaction_id, created_at from messages where environment_id = ? and transaction_id like ?",
          [env._id, `${tag}-%`],
        );
        if (rows.length >= load.ok) break;
        await sleep(100);
      }
      const created = new Map(rows.map((r) => [r.transaction_id, epochMs(r.created_at)]));
      const toFeed = new Latencies(load.sent.length + 1);
      for (const [n, due] of load.sent) {
        const at = created.get(`${tag}-${n}`);
        if (at !== undefined) toFeed.record(at - due);
      }
      const feed = toFeed.summary();
      results.push(
        `${backend}  ${label.padEnd(14)} ${rate}/s × ${seconds} s: acknowledged ${load.ok} (failed ${load.failed}), ` +
          `messages ${rows.length}; trigger → feed p50 ${feed.p50} ms, p99 ${feed.p99} ms, max ${feed.max} ms; ` +
          `ack p99 ${load.answer.p99} ms`,
      );
    }
    await reader.close();
    process.stdout.write(`${results.join("\n")}\n`);
  } finally {
    for (const child of children.reverse()) await child.stop();
    await db.drop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
