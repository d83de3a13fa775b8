// The real processes (src/main.ts, src/cli.ts), run as a user runs them, for the tests that start,
// kill, stop or load them: each on a database of its own (a temporary SQLite directory, or a
// PostgreSQL database made for the test), declared once per backend by forEachProcessBackend.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import postgres from "postgres";
import { SERVICE_NODE_FLAGS } from "../scripts/service-node-flags.ts";
import { systemClock } from "../src/clock.ts";
import { createOrganization } from "../src/onboarding/service.ts";
import { SecretBox } from "../src/store/secret-box.ts";
import { openStore, SQLITE_FILE } from "../src/store/store.ts";
import {
  type BackendName,
  describeEachBackend,
  dropTestDatabase,
  migratedPostgresDatabase,
  postgresUrl,
  testDatabaseName,
} from "./backends.ts";
import { poll } from "./poll.ts";

export const ROOT = path.resolve(import.meta.dirname, "..");

/** A database for a child process, made fresh for one test, and how to throw it away. */
export interface ProcessDatabase {
  readonly backend: BackendName;
  /** DATA_DIR or DATABASE_URL, as the processes read them. */
  readonly env: Record<string, string>;
  /** What openStore needs to open the same database in the test. */
  readonly storeOptions: { dataDir?: string; databaseUrl?: string };
  /** SQLite: the file; PostgreSQL: the URL. */
  readonly location: string;
  destroy(): Promise<void>;
}

/**
 * A new database of `backend`: SQLite in a temporary DATA_DIR; on PostgreSQL a database, not a
 * schema, so the processes use the server's default search_path, as a user's would. Empty, unless
 * `migrated` (PostgreSQL: copied from the migrated template, which spares each test a migration;
 * SQLite's costs little and seedOrganization runs it).
 */
export async function freshDatabase(
  backend: BackendName,
  { migrated = false }: { migrated?: boolean } = {},
): Promise<ProcessDatabase> {
  if (backend === "sqlite") {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-proc-"));
    return {
      backend,
      env: { DATA_DIR: dataDir },
      storeOptions: { dataDir },
      location: path.join(dataDir, SQLITE_FILE),
      destroy: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  if (!postgresUrl) throw new Error("no PostgreSQL in this run");
  const server = postgresUrl;
  if (migrated) {
    const { databaseUrl, drop } = await migratedPostgresDatabase(server);
    return {
      backend,
      env: { DATABASE_URL: databaseUrl },
      storeOptions: { databaseUrl },
      location: databaseUrl,
      destroy: drop,
    };
  }
  const name = testDatabaseName("tidings_proc");
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    backend,
    env: { DATABASE_URL: databaseUrl },
    storeOptions: { databaseUrl },
    location: databaseUrl,
    destroy: () => dropTestDatabase(server, name),
  };
}

/** Migrates the database and makes an organization in it: the Development key and its General group. */
export async function seedOrganization(db: ProcessDatabase) {
  const store = await openStore({ ...db.storeOptions, pgPoolSize: 2 });
  try {
    await store.migrate();
    const org = await createOrganization(
      { db: store.db, clock: systemClock },
      "Process test",
      new SecretBox(Buffer.alloc(32, 7)),
    );
    const dev = org.environments.find((e) => e.name === "Development");
    if (!dev) throw new Error("no Development environment");
    const group = await store.db
      .selectFrom("notification_groups")
      .select("id")
      .where("environment_id", "=", dev._id)
      .executeTakeFirstOrThrow();
    return { apiKey: dev.apiKey, environmentId: dev._id, generalGroupId: group.id };
  } finally {
    await store.close();
  }
}

/** The environment for a child: ours, minus anything that would point it at another database. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["DATABASE_URL", "DATA_DIR", "PORT", "HOST", "NODE_TEST_CONTEXT", "NODE_OPTIONS"]) {
    delete env[name];
  }
  // A PostgreSQL service refuses to start without the key that seals integration credentials.
  return { TIDINGS_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"), ...env, LOG_LEVEL: "info", ...extra };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  readonly child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<Finished>;
}

/**
 * The service's entry points as `npm test` bundled them (scripts/test-build.mjs): a process started
 * from a bundle skips tsx's loader, about a second of start-up each. Run on its own (node --import tsx
 * --test), a test starts the sources through tsx.
 */
const TEST_BUILD = process.env.TIDINGS_TEST_BUILD;
const BUNDLED = new Set(["src/main.ts", "src/cli.ts"]);

function scriptArgs(script: string): string[] {
  if (TEST_BUILD && BUNDLED.has(script)) return [path.join(TEST_BUILD, script.replace(/\.ts$/, ".mjs"))];
  return ["--import", import.meta.resolve("tsx"), path.join(ROOT, script)];
}

/**
 * Starts `node [flags] <script> ...args` (the bundle, or tsx on the source), from the repository root
 * or from `cwd`, as a user may run it from another folder.
 */
export function startTs(
  script: string,
  args: string[],
  env: Record<string, string>,
  flags: string[] = [],
  cwd = ROOT,
): Running {
  const child = spawn(process.execPath, [...flags, ...scriptArgs(script), ...args], {
    cwd,
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

/** Runs `node <script> ...args` (as startTs) and waits for it to exit. */
export function runTs(
  script: string,
  args: string[],
  env: Record<string, string>,
  cwd = ROOT,
): Promise<Finished> {
  return startTs(script, args, env, [], cwd).exited;
}

/**
 * poll() for a process: until `ready` holds; fails at once when the process exits first, and after
 * `limitMs` (a safety net for a hung process, not a timing assertion: the limit is generous on
 * purpose) SIGKILLs it, since a caller that got no handle to it could not, and fails with what it
 * wrote.
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
  const stop = () =>
    exited &&
    `the process exited (${exited.code ?? exited.signal})\nstdout:\n${exited.stdout}\nstderr:\n${exited.stderr}`;
  try {
    await poll(ready, Boolean, { what, limitMs, everyMs: 50, stop });
  } catch (error) {
    if (exited) throw error;
    running.child.kill("SIGKILL");
    throw new Error(
      `${(error as Error).message}\nstdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`,
    );
  }
}

export interface ServerProcess extends Running {
  readonly pid: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** The JSON log lines so far, parsed. */
  logs(): Record<string, unknown>[];
}

/**
 * Starts the server as `npm start` runs it (its node flags) on a free loopback port, and resolves once
 * it listens (within `ms`).
 */
export async function startServer(env: Record<string, string>, ms = 60_000): Promise<ServerProcess> {
  const running = startTs("src/main.ts", [], { HOST: "127.0.0.1", PORT: "0", ...env }, SERVICE_NODE_FLAGS);
  const listening = () => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(running.stdout())?.[1];
  await waitFor(running, () => listening() !== undefined, "the server to listen", ms);
  const url = listening() as string;
  if (running.child.pid === undefined) throw new Error("no pid");
  const logs = () =>
    running
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...running, pid: running.child.pid, url, logs };
}

/** Ends a server this test started (by its pid) and waits for it; SIGKILL when it will not go. */
export async function stopServer(server: Running, signal: NodeJS.Signals = "SIGTERM"): Promise<Finished> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.exited;
  server.child.kill(signal);
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 30_000);
  try {
    return await server.exited;
  } finally {
    clearTimeout(timer);
  }
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field by each test
  json: () => any;
}

/** A JSON request to the server; never throws for an HTTP status, only for a failed connection. */
export async function call(
  server: { url: string },
  method: string,
  urlPath: string,
  apiKey: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  const res = await fetch(server.url + urlPath, {
    method,
    headers: {
      authorization: `ApiKey ${apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export interface ProcessSuite {
  readonly backend: BackendName;
  /** A new database of the suite's backend (empty unless `migrated`); thrown away when the suite ends. */
  database(options?: { migrated?: boolean }): Promise<ProcessDatabase>;
  /** startServer, with the server killed (if it still runs) when the suite ends. */
  start(env: Record<string, string>, ms?: number): Promise<ServerProcess>;
}

/**
 * Declares the suite once per backend of the run (forEachBackend's rule, for real processes): each
 * run gets the backend's name and makes its databases and servers through the suite, which kills
 * the servers and drops the databases when it ends, after `define`'s own hooks.
 */
export function forEachProcessBackend(
  name: string,
  define: (suite: ProcessSuite) => void,
  options: { only?: readonly BackendName[]; sideBySide?: boolean } = {},
): void {
  describeEachBackend(
    name,
    (backend) => {
      const databases: ProcessDatabase[] = [];
      const servers: ServerProcess[] = [];
      define({
        backend: backend.name,
        async database(options) {
          const db = await freshDatabase(backend.name, options);
          databases.push(db);
          return db;
        },
        async start(env, ms) {
          const server = await startServer(env, ms);
          servers.push(server);
          return server;
        },
      });
      after(async () => {
        for (const server of servers) await stopServer(server, "SIGKILL");
        for (const db of databases) await db.destroy();
      });
    },
    options.only,
    { sideBySide: options.sideBySide },
  );
}
