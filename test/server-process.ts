// A real server process for the tests that kill, stop or load it: `node --import tsx src/main.ts`
// on a database of its own (a temporary SQLite directory, or a PostgreSQL database made for the run).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { SERVICE_NODE_FLAGS } from "../scripts/service-node-flags.ts";
import { openStore } from "../src/store/store.ts";
import { createOrganization } from "../src/tenancy/service.ts";
import { backends } from "./backends.ts";
import { childEnv } from "./processes.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export type BackendName = "sqlite" | "postgres";
export const backendNames: BackendName[] = backends.map((b) => b.name);

/** Where a server keeps its data, made fresh for one test, and how to throw it away. */
export interface Database {
  backend: BackendName;
  /** DATA_DIR or DATABASE_URL, as the server reads them. */
  env: Record<string, string>;
  /** SQLite: the file; PostgreSQL: the URL. */
  location: string;
  destroy(): Promise<void>;
}

export async function freshDatabase(backend: BackendName): Promise<Database> {
  if (backend === "sqlite") {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-proc-"));
    return {
      backend,
      env: { DATA_DIR: dir },
      location: path.join(dir, "tidings.db"),
      destroy: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `tidings_proc_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    backend,
    env: { DATABASE_URL: url.toString() },
    location: url.toString(),
    async destroy() {
      const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** Migrates the database and makes an organization in it: the Development key and its General group. */
export async function seedOrganization(db: Database) {
  const store = await openStore({
    databaseUrl: db.env.DATABASE_URL,
    dataDir: db.env.DATA_DIR,
    pgPoolSize: 2,
  });
  try {
    await store.migrate();
    const org = await createOrganization(store.db, "Process test");
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

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Every log line so far (JSON, one per line). */
  readonly lines: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the server on a free loopback port and resolves once it listens (within `ms`). */
export async function startServer(env: Record<string, string>, ms = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, "--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    // Never the developer's own DATABASE_URL or DATA_DIR: only the database the test made.
    env: childEnv({ HOST: "127.0.0.1", PORT: "0", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let pending = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not listen within ${ms} ms:\n${lines.join("\n")}`)),
      ms,
    );
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      pending += chunk;
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      }
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => lines.push(`[stderr] ${chunk}`));
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${lines.join("\n")}`));
    });
  });
  if (child.pid === undefined) throw new Error("no pid");
  return { child, pid: child.pid, url, lines, exited };
}

/** Ends a server this test started (by its pid) and waits for it; SIGKILL when it will not go. */
export async function stopServer(server: ServerProcess, signal: NodeJS.Signals = "SIGTERM") {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.exited;
  server.child.kill(signal);
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 30_000);
  try {
    return await server.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** A JSON request to the server; never throws for an HTTP status, only for a failed connection. */
export async function call(
  server: { url: string },
  method: string,
  urlPath: string,
  apiKey: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Headers;
  text: string; // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field by each test
  json: () => any;
}> {
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
