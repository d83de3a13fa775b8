// What a service with nothing to do costs (issue 25, item 7: at most 1% of a core and one query a
// second): the service (worker included) on a fresh database of each backend, left alone for a
// settling time after start, then measured over a window: its CPU (all threads, /proc/<pid>/stat) and,
// on PostgreSQL, the transactions its database committed or rolled back (pg_stat_database; the
// bench's own two reads of the counter included). Part of `npm run bench` (BENCH_IDLE=0 leaves it
// out), or alone: node --import tsx bench/idle.ts
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { postgresAnswers, redactDatabaseUrl } from "../src/store/store.ts";
import { cpuMs, freePort, ROOT, SERVICE_NODE_FLAGS, spawnNode, waitForHttp } from "./proc.ts";
import { printTargets, type Target } from "./report.ts";
import { type BackendName, cliInit, createDatabase } from "./seed.ts";
import { round } from "./stats.ts";

export interface IdleSettings {
  backends: BackendName[];
  /**
   * After the service answers /health, before the window: start-up's own work is not idle. That
   * includes V8's memory reducer, which compacts the heap once the allocation of start-up has
   * stopped: measured on PostgreSQL, three full collections 16–17 s after the start, some 200 ms of
   * its helper threads' CPU (1.07% of a core over a window from 10 s to 40 s, 0.23% from 25 s to
   * 55 s). What the settling costs is reported beside the window's figure.
   */
  settleSeconds: number;
  seconds: number;
}

export const idleSettings = (): IdleSettings => ({
  backends: (process.env.BENCH_BACKENDS ?? "sqlite,postgres").split(",") as BackendName[],
  settleSeconds: Number(process.env.BENCH_IDLE_SETTLE_SECONDS ?? 30),
  seconds: Number(process.env.BENCH_IDLE_SECONDS ?? 30),
});

export interface IdleResult {
  backend: BackendName;
  seconds: number;
  /** The service's CPU over the window, as a share of one core, in %. */
  cpuPercent: number;
  /** The same over the settling before it (start-up's last work, the memory reducer's collections). */
  settleSeconds: number;
  settleCpuPercent: number;
  /** PostgreSQL: transactions a second in the service's database over the window. */
  transactionsPerSecond?: number;
}

async function transactions(sql: postgres.Sql, database: string): Promise<number> {
  const [row] = await sql<{ n: string }[]>`
    select xact_commit + xact_rollback as n from pg_stat_database where datname = ${database}`;
  return Number(row?.n ?? 0);
}

export async function runIdleBench(settings: IdleSettings = idleSettings()): Promise<IdleResult[]> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-idle-"));
  const logFile = path.join(workDir, "processes.log");
  const results: IdleResult[] = [];
  try {
    const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    for (const backend of settings.backends) {
      if (backend === "postgres" && !(await postgresAnswers(adminUrl))) {
        process.stdout.write(
          `At rest: PostgreSQL SKIPPED: nothing answers at ${redactDatabaseUrl(adminUrl)}\n`,
        );
        continue;
      }
      const db = await createDatabase(backend, workDir, adminUrl);
      try {
        await cliInit(db, "Idle");
        const port = await freePort();
        const { DATABASE_URL: _url, DATA_DIR: _dir, ...rest } = process.env;
        const child = spawnNode(
          [...SERVICE_NODE_FLAGS, path.join(ROOT, "dist/main.js")],
          { ...rest, ...db.env, PORT: String(port), HOST: "127.0.0.1" },
          logFile,
        );
        const counter = db.databaseUrl ? postgres(db.databaseUrl, { max: 1, onnotice: () => {} }) : undefined;
        const name = db.databaseUrl ? new URL(db.databaseUrl).pathname.slice(1) : "";
        try {
          await waitForHttp(`http://127.0.0.1:${port}/health`, child, 60_000);
          const settleCpuBefore = cpuMs(child.pid);
          const settleStarted = performance.now();
          await new Promise((resolve) => setTimeout(resolve, settings.settleSeconds * 1000));
          const cpuBefore = cpuMs(child.pid);
          const settled = (performance.now() - settleStarted) / 1000;
          const txBefore = counter ? await transactions(counter, name) : 0;
          const started = performance.now();
          await new Promise((resolve) => setTimeout(resolve, settings.seconds * 1000));
          const cpu = cpuMs(child.pid) - cpuBefore;
          const txAfter = counter ? await transactions(counter, name) : 0;
          const seconds = (performance.now() - started) / 1000;
          results.push({
            backend,
            seconds: round(seconds, 1),
            cpuPercent: round((100 * cpu) / 1000 / seconds, 2),
            settleSeconds: round(settled, 1),
            settleCpuPercent: round((100 * (cpuBefore - settleCpuBefore)) / 1000 / settled, 2),
            ...(counter ? { transactionsPerSecond: round((txAfter - txBefore) / seconds, 2) } : {}),
          });
        } finally {
          await counter?.end();
          await child.stop();
        }
      } finally {
        await db.drop();
      }
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  return results;
}

/** Issue 25's item 7, judged: at most 1% of a core, and on PostgreSQL one query a second. */
export function idleTargets(results: IdleResult[]): Target[] {
  return results.map((r) => ({
    name: `${r.backend}: at rest ≤ 1% of a core${r.transactionsPerSecond === undefined ? "" : " and ≤ 1 query a second"}`,
    measured:
      `${r.cpuPercent}% over ${r.seconds} s` +
      (r.transactionsPerSecond === undefined ? "" : `; ${r.transactionsPerSecond} transactions a second`),
    pass: r.cpuPercent <= 1 && (r.transactionsPerSecond === undefined || r.transactionsPerSecond <= 1),
  }));
}

export function printIdle(results: IdleResult[]): void {
  if (results.length === 0) return;
  const lines = [
    "",
    "At rest (one service process with its worker, nothing to do; target ≤ 1% of a core, ≤ 1 query a second)",
    ...results.map(
      (r) =>
        `  ${r.backend}: ${r.cpuPercent}% of a core over ${r.seconds} s (${r.settleCpuPercent}% over the ${r.settleSeconds} s after /health answered, before it)` +
        (r.transactionsPerSecond === undefined
          ? " (SQLite: no server to count queries on)"
          : `; ${r.transactionsPerSecond} transactions a second in its database (the two reads of the counter included)`),
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, "bench", "idle.ts")) {
  const results = await runIdleBench();
  printIdle(results);
  printTargets("Judged:", idleTargets(results));
  if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}
