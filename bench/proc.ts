import { type ChildProcess, execSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export { SERVICE_NODE_FLAGS } from "../scripts/service-node-flags.ts";

/** A free TCP port on loopback (the kernel's choice; closed again before use). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Kilobytes from a line of /proc/<pid>/status (VmHWM: peak RSS; VmRSS: now); 0 when gone. */
export function procStatusKb(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Peak resident set size so far, in MiB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/** Spawns `node <args>`; output goes to `logFile` (append). */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv, logFile: string): Child {
  const out = fs.openSync(logFile, "a");
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", out, out] });
  fs.closeSync(out);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start node ${args.join(" ")}`);
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  return {
    process: child,
    pid,
    peakRssMb: () => procStatusKb(pid, "VmHWM") / 1024,
    async stop() {
      if (exited) return;
      child.kill("SIGTERM");
      for (let i = 0; i < 100 && !exited; i++) await sleep(100);
      if (!exited) {
        child.kill("SIGKILL");
        for (let i = 0; i < 50 && !exited; i++) await sleep(100);
      }
    },
  };
}

/**
 * Polls `url` until it answers 2xx; throws after `timeoutMs` (BENCH_START_TIMEOUT_MS, 30 s by
 * default: a loaded machine starts a service slower) or when the child exits.
 */
export async function waitForHttp(
  url: string,
  child: Child,
  timeoutMs = Number(process.env.BENCH_START_TIMEOUT_MS ?? 30_000),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null)
      throw new Error(`${url}: the process exited (${child.process.exitCode})`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Runs `node <args>` to completion and returns its stdout; throws with stderr on failure. */
export function runNode(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`node ${args.join(" ")} failed (${signal ?? code}):\n${stderr.slice(-4000)}`));
    });
  });
}

/** CPU time (user + system, all threads) the process has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name (which may hold spaces) start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execSync("getconf CLK_TCK", { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();
