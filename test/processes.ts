import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { postgresUrl } from "./backends.ts";

/** Helpers for tests that run the real processes (src/cli.ts, src/main.ts) as a user would. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A database for a child process: SQLite in a temp DATA_DIR, or a fresh PostgreSQL database. */
export interface ProcessDatabase {
  readonly backend: "sqlite" | "postgres";
  /** The environment variables that point a process at it. */
  readonly env: Record<string, string>;
  /** What openStore needs to open the same database in the test. */
  readonly storeOptions: { dataDir?: string; databaseUrl?: string };
  destroy(): Promise<void>;
}

export function sqliteDatabase(): ProcessDatabase {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-proc-"));
  return {
    backend: "sqlite",
    env: { DATA_DIR: dataDir },
    storeOptions: { dataDir },
    async destroy() {
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A new, empty PostgreSQL database on the test server (a database, not a schema: the processes
 * use the server's default search_path, as a user's would). Dropped by destroy().
 */
export async function postgresDatabase(): Promise<ProcessDatabase | undefined> {
  if (!postgresUrl) return undefined;
  const name = `tidings_proc_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(postgresUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    backend: "postgres",
    env: { DATABASE_URL: databaseUrl },
    storeOptions: { databaseUrl },
    async destroy() {
      const drop = postgres(postgresUrl as string, { max: 1, onnotice: () => {} });
      try {
        await drop.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await drop.end();
      }
    },
  };
}

/** The environment for a child: ours, minus anything that would point it at another database. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["DATABASE_URL", "DATA_DIR", "PORT", "HOST", "NODE_TEST_CONTEXT", "NODE_OPTIONS"]) {
    delete env[name];
  }
  return { ...env, LOG_LEVEL: "info", ...extra };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node --import tsx <script> ...args` from the repository root and waits for it to exit. */
export function runTs(script: string, args: string[], env: Record<string, string>): Promise<Finished> {
  const child = startTs(script, args, env);
  return child.exited;
}

export interface Running {
  readonly child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<Finished>;
}

export function startTs(script: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * Waits until `ready` holds, polling; fails when the process exits first or after `limitMs` (a
 * safety net for a hung process, not a timing assertion: the limit is generous on purpose).
 */
export async function waitFor(
  running: Running,
  ready: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 60_000,
): Promise<void> {
  let exited: Finished | undefined;
  void running.exited.then((f) => {
    exited = f;
  });
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await ready()) return;
    if (exited) {
      throw new Error(
        `the process exited (${exited.code ?? exited.signal}) before ${what}\nstdout:\n${exited.stdout}\nstderr:\n${exited.stderr}`,
      );
    }
    if (Date.now() > deadline) {
      running.child.kill("SIGKILL");
      throw new Error(
        `gave up waiting for ${what}\nstdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
