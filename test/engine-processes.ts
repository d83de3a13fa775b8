// What the engine's process tests share (engine-crash, engine-workers): an in-app workflow and its
// subscribers made over HTTP, worker-only processes, the database's view of the engine's progress
// (read directly: "has the worker drained?" is not an API question), and every in-app message
// read back over HTTP.
import assert from "node:assert/strict";
import SqliteDatabase from "better-sqlite3";
import postgres from "postgres";
import { SERVICE_NODE_FLAGS } from "../scripts/service-node-flags.ts";
import { poll } from "./poll.ts";
import {
  call,
  type ProcessDatabase,
  type ProcessSuite,
  type Running,
  type ServerProcess,
  seedOrganization,
  startTs,
  waitFor,
} from "./processes.ts";

/**
 * An active workflow whose in-app message's content is the trigger's transactionId. `via`:
 * "acknowledgement", one in-app step, which the trigger's own transaction delivers; "queue", the
 * in-app step behind a throttle that lets every run through (a step the acknowledgement leaves to
 * the worker), so that the worker delivers it: one task a trigger, the throttle's, whose transaction
 * writes the in-app message too.
 */
export async function inAppWorkflow(
  server: { url: string },
  apiKey: string,
  groupId: string,
  name: string,
  via: "acknowledgement" | "queue" = "acknowledgement",
): Promise<string> {
  const inApp = { template: { type: "in_app", content: "{{tx}}" } };
  const throttle = {
    template: { type: "throttle" },
    metadata: { amount: 1, unit: "minutes", threshold: 1_000_000 },
  };
  const res = await call(server, "POST", "/v1/workflows", apiKey, {
    name,
    notificationGroupId: groupId,
    active: true,
    steps: via === "queue" ? [throttle, inApp] : [inApp],
  });
  assert.equal(res.status, 201, res.text);
  return res.json().data.triggers[0].identifier as string;
}

export async function makeSubscribers(
  server: { url: string },
  apiKey: string,
  count: number,
  prefix: string,
): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const subscriberId of ids) {
    const res = await call(server, "POST", "/v1/subscribers", apiKey, { subscriberId, firstName: "S" });
    assert.equal(res.status, 201, res.text);
  }
  return ids;
}

/** Starts `TIDINGS_ROLE=worker` as `npm start` runs it; resolves once it takes tasks. */
export async function startWorkerProcess(env: Record<string, string>): Promise<Running> {
  const running = startTs("src/main.ts", [], { ...env, TIDINGS_ROLE: "worker" }, SERVICE_NODE_FLAGS);
  await waitFor(running, () => running.stdout().includes('"msg":"worker running"'), "the worker to start");
  return running;
}

export interface EngineProgress {
  /** Jobs not yet in a final state, by status. */
  unfinished: Record<string, number>;
  /** Tasks still in the queue (SQLite's table, or graphile-worker's jobs). */
  tasks: number;
  /** Of those, tasks locked by a worker. */
  lockedTasks: number;
}

const UNFINISHED = ["pending", "queued", "running", "delayed"];

/** Reads the engine's tables of a process database: what is still to run. */
export class EngineProbe {
  readonly #db: ProcessDatabase;
  readonly #pg: postgres.Sql | undefined;

  constructor(db: ProcessDatabase) {
    this.#db = db;
    this.#pg = db.backend === "postgres" ? postgres(db.location, { max: 1, onnotice: () => {} }) : undefined;
  }

  async progress(): Promise<EngineProgress> {
    if (this.#pg) {
      const sql = this.#pg;
      const jobs = await sql<{ status: string; n: number }[]>`
        select status, count(*)::int as n from jobs where status in ${sql(UNFINISHED)} group by status`;
      const [tasks] = await sql<{ n: number; locked: number }[]>`
        select count(*)::int as n, count(locked_by)::int as locked from graphile_worker.jobs`;
      return {
        unfinished: Object.fromEntries(jobs.map((j) => [j.status, j.n])),
        tasks: tasks?.n ?? 0,
        lockedTasks: tasks?.locked ?? 0,
      };
    }
    const raw = new SqliteDatabase(this.#db.location, { readonly: true, fileMustExist: true });
    try {
      raw.pragma("busy_timeout = 5000");
      const jobs = raw
        .prepare(
          `select status, count(*) as n from jobs where status in (${UNFINISHED.map(() => "?").join(",")}) group by status`,
        )
        .all(...UNFINISHED) as { status: string; n: number }[];
      const tasks = raw
        .prepare("select count(*) as n, count(claimed_at) as locked from queue_tasks")
        .get() as { n: number; locked: number };
      return {
        unfinished: Object.fromEntries(jobs.map((j) => [j.status, j.n])),
        tasks: tasks.n,
        lockedTasks: tasks.locked,
      };
    } finally {
      raw.close();
    }
  }

  /** How many rows one of the engine's tables holds: its messages, or its runs (notifications). */
  count(table: "messages" | "notifications"): Promise<number> {
    return this.#number(`select count(*) as n from ${table}`);
  }

  /** How many (job, detail) pairs the execution details hold more than once: a step recorded twice. */
  repeatedDetails(): Promise<number> {
    return this.#number(
      "select count(*) as n from (select job_id, detail from execution_details group by job_id, detail having count(*) > 1) as repeated",
    );
  }

  /** The number `n` a query answers, on either backend. */
  async #number(query: string): Promise<number> {
    if (this.#pg) {
      const [row] = await this.#pg.unsafe<{ n: string }[]>(query);
      return Number(row?.n ?? 0);
    }
    const raw = new SqliteDatabase(this.#db.location, { readonly: true, fileMustExist: true });
    try {
      raw.pragma("busy_timeout = 5000");
      return Number((raw.prepare(query).get() as { n: number }).n);
    } finally {
      raw.close();
    }
  }

  /** The jobs in one status, with their attempts (ids of jobs, not tasks). */
  async jobsIn(status: string): Promise<{ id: string; status: string; attempts: number }[]> {
    if (this.#pg) {
      return [
        ...(await this.#pg<{ id: string; status: string; attempts: number }[]>`
        select id, status, attempts from jobs where status = ${status}`),
      ];
    }
    const raw = new SqliteDatabase(this.#db.location, { readonly: true, fileMustExist: true });
    try {
      raw.pragma("busy_timeout = 5000");
      return raw.prepare("select id, status, attempts from jobs where status = ?").all(status) as {
        id: string;
        status: string;
        attempts: number;
      }[];
    } finally {
      raw.close();
    }
  }

  /** The jobs with these ids, with their status and attempts. */
  async jobs(ids: readonly string[]): Promise<{ id: string; status: string; attempts: number }[]> {
    if (ids.length === 0) return [];
    if (this.#pg) {
      return [
        ...(await this.#pg<{ id: string; status: string; attempts: number }[]>`
        select id, status, attempts from jobs where id in ${this.#pg(ids)}`),
      ];
    }
    const raw = new SqliteDatabase(this.#db.location, { readonly: true, fileMustExist: true });
    try {
      raw.pragma("busy_timeout = 5000");
      return raw
        .prepare(`select id, status, attempts from jobs where id in (${ids.map(() => "?").join(",")})`)
        .all(...ids) as { id: string; status: string; attempts: number }[];
    } finally {
      raw.close();
    }
  }

  /** PostgreSQL: SQL against the process database (the tests' own look at the queue's tables). */
  get sql(): postgres.Sql | undefined {
    return this.#pg;
  }

  /**
   * Polls until no job is unfinished and the queue is empty; fails after `limitMs` with what is
   * left. Returns how long it took.
   */
  async drained(limitMs: number, alive?: () => void): Promise<number> {
    const started = Date.now();
    await poll(
      () => {
        alive?.();
        return this.progress();
      },
      (progress) => Object.keys(progress.unfinished).length === 0 && progress.tasks === 0,
      { what: "the worker to drain", limitMs, everyMs: 100 },
    );
    return Date.now() - started;
  }

  async close(): Promise<void> {
    await this.#pg?.end();
  }
}

export interface SeenMessage {
  id: string;
  transactionId: string;
  subscriberId: string;
  content: string;
}

/** Every in-app message of the environment, over GET /v1/messages, page by page. */
export async function allMessages(server: { url: string }, apiKey: string): Promise<SeenMessage[]> {
  const out: SeenMessage[] = [];
  for (let page = 0; ; page++) {
    const res = await call(server, "GET", `/v1/messages?channel=in_app&limit=100&page=${page}`, apiKey);
    assert.equal(res.status, 200, res.text);
    const body = res.json();
    for (const m of body.data) {
      out.push({
        id: m._id,
        transactionId: m.transactionId,
        subscriberId: m.subscriberId,
        content: m.content,
      });
    }
    if (!body.hasMore || body.data.length === 0) return out;
  }
}

/** The transactionIds of a subscriber's feed (GET /v1/subscribers/:id/notifications/feed), every page. */
export async function feedTransactions(
  server: { url: string },
  apiKey: string,
  subscriberId: string,
): Promise<string[]> {
  const out: string[] = [];
  for (let page = 0; ; page++) {
    const res = await call(
      server,
      "GET",
      `/v1/subscribers/${encodeURIComponent(subscriberId)}/notifications/feed?limit=100&page=${page}`,
      apiKey,
    );
    assert.equal(res.status, 200, res.text);
    const body = res.json();
    for (const m of body.data) out.push(m.transactionId);
    if (!body.hasMore || body.data.length === 0) return out;
  }
}

/** Counts of each value. */
/**
 * What a crash test starts from: a migrated database with an organization, the environment of a
 * server that presumes a dead worker dead within 2 s and counts no rate limit, a probe of the
 * engine's tables (closed after the test), and the server started.
 */
export async function crashTestStart(suite: ProcessSuite, t: { after(fn: () => unknown): void }) {
  const db = await suite.database({ migrated: true });
  const seed = await seedOrganization(db);
  const env = { ...db.env, RATE_LIMIT_RPS: "0", WORKER_HEARTBEAT_MS: "250", WORKER_DEAD_AFTER_MS: "2000" };
  const probe = new EngineProbe(db);
  t.after(() => probe.close());
  const server: ServerProcess = await suite.start(env);
  return { db, seed, env, probe, server, key: seed.apiKey };
}

/** Asserts that the messages are one for each of `subscribers`, and none for anyone else. */
export function assertOneMessageEach(messages: readonly SeenMessage[], subscribers: readonly string[]): void {
  const counts = tally(messages.map((m) => m.subscriberId));
  assert.deepEqual(
    [...counts].filter(([, n]) => n !== 1),
    [],
    "no subscriber has two messages",
  );
  assert.deepEqual(
    subscribers.filter((m) => !counts.has(m)),
    [],
    "every subscriber has its message",
  );
  assert.equal(messages.length, subscribers.length);
}

/** Kills the server with SIGKILL and waits until it is gone. */
export async function killServer(server: {
  child: { kill(signal: NodeJS.Signals): boolean };
  exited: Promise<{ signal: NodeJS.Signals | null }>;
}): Promise<void> {
  server.child.kill("SIGKILL");
  const exit = await server.exited;
  assert.equal(exit.signal, "SIGKILL");
}

export function tally(values: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}
