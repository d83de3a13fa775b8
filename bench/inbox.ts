// Novu's current inbox (/v1/inbox, docs/engine.md "The inbox") under the bench, per backend, in the
// run that measures everything else (scenario `inbox`):
//
// (a) real time: BENCH_INBOX_SOCKETS (1,000) inbox sessions of distinct subscribers, each a `Novu`
//     client of @novu/js holding its own socket (socket.io, the inbox token); BENCH_INBOX_TRIGGERS
//     (300) triggers, each to one of them, sent BENCH_INBOX_RATE (20) a second; each timed from its
//     POST until its subscriber's client emits `notifications.notification_received`, and split at
//     the trigger's answer and at the message's createdAt (the moment the worker wrote it).
// (b) reads: a subscriber with BENCH_INBOX_HEAVY (10,000) notifications in an environment of
//     BENCH_INBOX_NOTIFICATIONS (1,000,000), the rows cloned in one set-based statement from a
//     message the engine wrote (generate_series on PostgreSQL, a recursive CTE on SQLite), every
//     column as the engine writes it; then `GET /v1/inbox/notifications` (five filters in turn) and
//     `GET /v1/inbox/notifications/count` (the same five in one request) with the session's token,
//     as fast as 32 connections go, at half that rate and one at a time; the same statements timed
//     alone, one request's after another's (a count's two side by side, as the service runs them);
//     and their plans (EXPLAIN QUERY PLAN / EXPLAIN).
import { randomBytes } from "node:crypto";
import path from "node:path";
import { Novu } from "@novu/js";
import { CompiledQuery } from "kysely";
import { tagSetId } from "../src/engine/message-repository.ts";
import { readCountFilters } from "../src/inbox/filters.ts";
import { countInbox, countInboxQueries, type InboxOwner, inboxPageQuery } from "../src/inbox/repository.ts";
import { openStore, type Store } from "../src/store/store.ts";
import { BULK_SIZE } from "./bulk.ts";
import type { LoadResult, LoadSpec } from "./load.ts";
import type { Child } from "./proc.ts";
import {
  type BackendName,
  type BenchDatabase,
  type Environment,
  openReader,
  seedSubscribers,
} from "./seed.ts";
import { Latencies, type Measurement, round } from "./stats.ts";

export interface InboxSettings {
  sockets: number;
  triggers: number;
  /** Triggers a second, sent at that pace whatever the answers. */
  rate: number;
  /** Rows in the environment's messages, the heavy subscriber's among them. */
  notifications: number;
  heavy: number;
  /** Subscribers the rest of the rows are spread over. */
  subscribers: number;
  /** Executions of each statement timed alone. */
  statementRuns: number;
  seconds: number;
  warmupSeconds: number;
  halfRateSeconds: number;
}

export const inboxSettings = (intEnv: (name: string, fallback: number) => number): InboxSettings => ({
  sockets: intEnv("BENCH_INBOX_SOCKETS", 1_000),
  triggers: intEnv("BENCH_INBOX_TRIGGERS", 300),
  rate: intEnv("BENCH_INBOX_RATE", 20),
  notifications: intEnv("BENCH_INBOX_NOTIFICATIONS", 1_000_000),
  heavy: intEnv("BENCH_INBOX_HEAVY", 10_000),
  subscribers: intEnv("BENCH_INBOX_SUBSCRIBERS", 1_000),
  statementRuns: intEnv("BENCH_INBOX_STATEMENT_RUNS", 500),
  seconds: intEnv("BENCH_SECONDS", 8),
  warmupSeconds: intEnv("BENCH_WARMUP_SECONDS", 2),
  halfRateSeconds: intEnv("BENCH_HALF_RATE_SECONDS", 5),
});

interface Service {
  child: Child;
  url: string;
}

/** What run.ts lends: its service and load helpers. */
export interface InboxContext {
  settings: InboxSettings;
  log(message: string): void;
  startService(db: BenchDatabase): Promise<Service>;
  environmentOf(db: BenchDatabase, name: string): Promise<Environment>;
  measure(
    spec: Omit<LoadSpec, "connections" | "warmupSeconds" | "seconds">,
    pid: number,
    warmupSeconds: number,
    seconds: number,
  ): Promise<LoadResult & { cpuUsPerRequest: number }>;
  load(spec: Omit<LoadSpec, "connections"> & { connections?: number }): Promise<LoadResult>;
}

type Split = { p50: number; p99: number };

export interface InboxRealtimeFigures {
  sockets: number;
  triggers: number;
  received: number;
  /** Trigger POST sent → the client's `notification_received`. */
  latency: { p50: number; p99: number; max: number };
  /** The trigger's answer (its acknowledgement). */
  answer: Split;
  /** Trigger POST sent → the message's createdAt (the worker ran the in-app step). */
  toMessage: Split;
  /** The message's createdAt → the client's event (commit, the sockets' read, the emit, the wire). */
  toClient: Split;
}

export interface InboxReadFigures {
  /** The full load (32 connections), its CPU per request, and the same load at half its rate. */
  service: Measurement & { cpuUsPerRequest: number };
  halfRate: Measurement & { rate: number; autocannonP99: number };
  /** One connection, one request at a time: the service's own latency, no queue before it. */
  single: Measurement;
  /** The request's statements alone, on the bench's own connections, as the service runs them. */
  statement: { p50: number; p99: number; max: number; runs: number };
}

/** One filter's statements alone: a page of it, and its count. */
export interface FilterStatements {
  filter: Record<string, unknown>;
  list: { p50: number; p99: number };
  count: { p50: number; p99: number };
  /** How many of the subscriber's notifications it counts. */
  matches: number;
}

export interface InboxFigures {
  backend: BackendName;
  realtime?: InboxRealtimeFigures;
  reads?: {
    notifications: number;
    heavy: number;
    subscribers: number;
    seedSeconds: number;
    filters: Record<string, unknown>[];
    list: InboxReadFigures;
    count: InboxReadFigures;
    /** The count <Inbox /> itself asks for when it opens and after every change: BELL_FILTERS. */
    bell: InboxReadFigures;
    perFilter: FilterStatements[];
    /** Each filter's statements' plans, as the database gives them. */
    plans: { filter: Record<string, unknown>; list: string; count: string }[];
    /** The plans of the count requests' statements (side by side): the five filters, the bell's four. */
    countPlans: { filters: string; plan: string }[];
  };
}

/**
 * The five filters, as @novu/js sends them: the default view, unread only, the Archived view, a
 * tag, and a data field with a severity. The count asks for all five at once.
 */
export const INBOX_FILTERS: Record<string, unknown>[] = [
  { archived: false, snoozed: false },
  { read: false, archived: false, snoozed: false },
  { archived: true },
  { tags: ["billing"], archived: false, snoozed: false },
  { data: { kind: "invoice" }, severity: "high", archived: false, snoozed: false },
];

/** What @novu/react's <Inbox /> counts for its bell: the unread, by severity. */
export const BELL_FILTERS: Record<string, unknown>[] = ["high", "medium", "low", "none"].map((severity) => ({
  read: false,
  archived: false,
  snoozed: false,
  severity,
}));

const countPath = (filters: Record<string, unknown>[]) =>
  `/v1/inbox/notifications/count?${new URLSearchParams({ filters: JSON.stringify(filters) })}`;

/** A page's path for a filter, its query string as @novu/js's fetchNotifications builds it. */
function listPath(filter: Record<string, unknown>): string {
  const params = new URLSearchParams("limit=10");
  for (const tag of (filter.tags as string[] | undefined) ?? []) params.append("tags[]", tag);
  for (const flag of ["read", "archived", "snoozed", "seen"])
    if (filter[flag] !== undefined) params.append(flag, String(filter[flag]));
  if (filter.data !== undefined) params.append("data", JSON.stringify(filter.data));
  if (typeof filter.severity === "string") params.append("severity", filter.severity);
  return `/v1/inbox/notifications?${params}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call<T>(method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

async function applicationIdentifier(service: Service, env: Environment) {
  const me = await call<{ data: { identifier: string } }>("GET", `${service.url}/v1/environments/me`, {
    authorization: `ApiKey ${env.apiKey}`,
  });
  return me.data.identifier;
}

async function createWorkflow(service: Service, env: Environment, body: Record<string, unknown>) {
  const auth = { authorization: `ApiKey ${env.apiKey}` };
  const groups = await call<{ data: { _id: string }[] }>(
    "GET",
    `${service.url}/v1/notification-groups`,
    auth,
  );
  const created = await call<{ data: { _id: string; triggers: { identifier: string }[] } }>(
    "POST",
    `${service.url}/v1/workflows`,
    auth,
    { notificationGroupId: groups.data[0]?._id, active: true, ...body },
  );
  return { id: created.data._id, name: created.data.triggers[0]?.identifier as string };
}

const split = (latencies: Latencies): Split => {
  const { p50, p99 } = latencies.summary();
  return { p50, p99 };
};

/** (a): trigger → notification_received through @novu/js's socket, with `sockets` sessions open. */
async function realtime(
  ctx: InboxContext,
  db: BenchDatabase,
  env: Environment,
): Promise<InboxRealtimeFigures> {
  const { settings } = ctx;
  const service = await ctx.startService(db);
  const clients: Novu[] = [];
  try {
    const auth = { authorization: `ApiKey ${env.apiKey}` };
    const identifier = await applicationIdentifier(service, env);
    const workflow = await createWorkflow(service, env, {
      name: "Inbox realtime bench",
      steps: [{ template: { type: "in_app", content: "Event {{n}}" } }],
    });
    const pending = new Map<string, { sentAt: number; sentWall: number; resolve: () => void }>();
    const latencies = new Latencies(settings.triggers);
    const answers = new Latencies(settings.triggers);
    const toMessage = new Latencies(settings.triggers);
    const toClient = new Latencies(settings.triggers);
    const tag = randomBytes(3).toString("hex");
    // The subscribers exist before their sessions, made by the API key as the customer's server
    // makes them: a session may create only SESSION_NEW_SUBSCRIBERS_PER_MINUTE of them.
    for (let i = 0; i < settings.sockets; i += BULK_SIZE) {
      await call("POST", `${service.url}/v1/subscribers/bulk`, auth, {
        subscribers: Array.from({ length: Math.min(BULK_SIZE, settings.sockets - i) }, (_, j) => ({
          subscriberId: `inbox-${tag}-${i + j}`,
        })),
      });
    }
    const open = async (i: number) => {
      const novu = new Novu({
        applicationIdentifier: identifier,
        subscriber: `inbox-${tag}-${i}`,
        apiUrl: service.url,
        socketUrl: service.url,
        socketOptions: { reconnection: false },
        useCache: false,
      });
      clients.push(novu);
      const session = await new Promise<{ error?: unknown }>((resolve) =>
        novu.on("session.initialize.resolved", resolve),
      );
      if (session.error) throw new Error(`inbox session ${i}: ${String(session.error)}`);
      const connected = new Promise<{ error?: unknown }>((resolve) =>
        novu.on("socket.connect.resolved", resolve),
      );
      // Listening for notifications is what opens the client's socket.
      novu.on("notifications.notification_received", ({ result }) => {
        const waiting = pending.get(result.transactionId);
        if (!waiting) return;
        const now = performance.now();
        const wall = Date.now();
        latencies.record(now - waiting.sentAt);
        const createdAt = Date.parse(result.createdAt);
        toMessage.record(createdAt - waiting.sentWall);
        toClient.record(wall - createdAt);
        pending.delete(result.transactionId);
        waiting.resolve();
      });
      const socket = await connected;
      if (socket.error) throw new Error(`inbox socket ${i}: ${String(socket.error)}`);
    };
    for (let i = 0; i < settings.sockets; i += 50)
      await Promise.all(Array.from({ length: Math.min(50, settings.sockets - i) }, (_, j) => open(i + j)));
    await sleep(2_000);
    ctx.log(`${clients.length} inbox clients connected; ${settings.triggers} triggers at ${settings.rate}/s`);

    const arrivals: Promise<void>[] = [];
    const gap = 1000 / Math.max(1, settings.rate);
    const started = performance.now();
    for (let n = 0; n < settings.triggers; n++) {
      const wait = started + n * gap - performance.now();
      if (wait > 0) await sleep(wait);
      const transactionId = `inbox-rt-${tag}-${n}`;
      const to = `inbox-${tag}-${Math.floor(Math.random() * settings.sockets)}`;
      arrivals.push(
        new Promise<void>((resolve) => {
          const sentAt = performance.now();
          pending.set(transactionId, { sentAt, sentWall: Date.now(), resolve });
          call("POST", `${service.url}/v1/events/trigger`, auth, {
            name: workflow.name,
            to,
            payload: { n },
            transactionId,
          }).then(
            () => answers.record(performance.now() - sentAt),
            (error: unknown) => ctx.log(`trigger ${n} failed: ${String(error)}`),
          );
        }),
      );
    }
    await Promise.race([Promise.all(arrivals), sleep(30_000)]);
    return {
      sockets: clients.length,
      triggers: settings.triggers,
      received: latencies.count,
      latency: latencies.summary(),
      answer: split(answers),
      toMessage: split(toMessage),
      toClient: split(toClient),
    };
  } finally {
    await Promise.all(clients.map((novu) => novu.socket.disconnect()));
    await service.child.stop();
  }
}

/** Connections of the bench's own to the service's database, for the statements and their plans. */
const openBenchStore = (db: BenchDatabase): Promise<Store> =>
  openStore({
    ...(db.databaseUrl
      ? { databaseUrl: db.databaseUrl }
      : { dataDir: path.dirname(db.sqliteFile as string) }),
    // Two: a count's statements run side by side, as in the service.
    pgPoolSize: 2,
    sqliteBackgroundCheckpoints: false,
  });

/**
 * Clones the template message `count` times in one statement: the first `heavy - 1` clones to the
 * template's subscriber, the rest spread over the environment's other subscribers. Every column is
 * copied from the row the engine wrote but those that make a row itself: ids (ObjectId layout), the
 * subscriber, the moment (one a second back from now), the flags (seen, read, archived, snoozed,
 * with their moments, each implying the one before as the inbox's marks do), severity, tags, data.
 */
async function cloneMessages(
  db: BenchDatabase,
  templateId: string,
  count: number,
  heavy: number,
): Promise<number> {
  const started = performance.now();
  const prefixes = Array.from({ length: 4 }, () => randomBytes(2).toString("hex"));
  const now = new Date();
  const snoozedUntil = new Date(now.getTime() + 86_400_000).toISOString();
  const sqlite = db.backend === "sqlite";
  // n: the clone's number, 1..count; k: which of the others (0-based) gets it.
  const objectId = (prefix: string) =>
    sqlite
      ? `printf('%08x', ${Math.floor(now.getTime() / 1000)}) || '${prefix}' || printf('%012x', n)`
      : `lpad(to_hex(${Math.floor(now.getTime() / 1000)}), 8, '0') || '${prefix}' || lpad(to_hex(n), 12, '0')`;
  const created = sqlite
    ? `strftime('%Y-%m-%dT%H:%M:%fZ', @now, '-' || (@count + 1 - n) || ' seconds')`
    : `($now::timestamptz - make_interval(secs => $count + 1 - n))`;
  const iso = sqlite ? created : `to_char(${created} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const read = "(n % 3 = 0 or n % 10 = 0)";
  const seen = `(n % 2 = 0 or ${read})`;
  const bool = (condition: string) =>
    sqlite ? `(case when ${condition} then 1 else 0 end)` : `(${condition})`;
  const at = (condition: string) => `(case when ${condition} then ${created} end)`;
  const isHeavy = sqlite ? "n < @heavy" : "n < $heavy";
  const expressions: Record<string, string> = {
    id: objectId(prefixes[0] as string),
    notification_id: objectId(prefixes[1] as string),
    job_id: objectId(prefixes[2] as string),
    transaction_id: `'bench-' || '${prefixes[3]}' || '-' || n`,
    subscriber_ref: `(case when ${isHeavy} then t.subscriber_ref else o.id end)`,
    subscriber_id: `(case when ${isHeavy} then t.subscriber_id else o.subscriber_id end)`,
    created_at: created,
    updated_at: created,
    delivered_at: `'["' || ${iso} || '"]'`,
    seen: bool(seen),
    read: bool(read),
    archived: bool("n % 10 = 0"),
    first_seen_at: at(seen),
    last_seen_at: at(seen),
    last_read_at: at(read),
    archived_at: at("n % 10 = 0"),
    snoozed_until: `(case when n % 50 = 25 then ${sqlite ? "@snoozed" : "$snoozed::timestamptz"} end)`,
    severity: "(case n % 4 when 0 then 'high' when 1 then 'medium' when 2 then 'low' else 'none' end)",
    tags: `(case n % 3 ${TAG_LISTS.map((tags, i) => (i < 2 ? `when ${i} then '${tags}'` : `else '${tags}'`)).join(" ")} end)`,
    tag_set: `(case n % 3 ${TAG_LISTS.map((tags, i) => (i < 2 ? `when ${i} then '${tagSetId(tags)}'` : `else '${tagSetId(tags)}'`)).join(" ")} end)`,
    data: `'{"invoice":"' || n || '","kind":"' || (case when n % 2 = 0 then 'invoice' else 'receipt' end) || '","labels":["x","red"],"meta":{"region":"eu"}}'`,
  };
  const expression = (column: string) => expressions[column] ?? `t.${sqlite ? column : `"${column}"`}`;
  if (sqlite) {
    const { default: SqliteDatabase } = await import("better-sqlite3");
    const raw = new SqliteDatabase(db.sqliteFile as string);
    try {
      raw.pragma("journal_mode = WAL");
      raw.pragma("cache_size = -262144");
      const columns = (
        raw.prepare("select name from pragma_table_info('messages')").all() as { name: string }[]
      ).map((c) => c.name);
      raw.transaction(() => {
        // The other subscribers, numbered, so that a clone finds its own by n.
        raw.exec("create temp table bench_others (k integer primary key, id text, subscriber_id text)");
        raw
          .prepare(
            `insert into bench_others (k, id, subscriber_id)
             select row_number() over (order by s.id) - 1, s.id, s.subscriber_id from subscribers s, messages t
             where t.id = @template and s.environment_id = t.environment_id and s.id <> t.subscriber_ref`,
          )
          .run({ template: templateId });
        const others = (raw.prepare("select count(*) as n from bench_others").get() as { n: number }).n;
        raw
          .prepare(
            `with recursive seq(n) as (select 1 union all select n + 1 from seq where n < @count)
             insert into messages (${columns.map((c) => `"${c}"`).join(", ")})
             select ${columns.map(expression).join(", ")}
             from seq join messages t on t.id = @template left join bench_others o on o.k = n % @others`,
          )
          .run({ count, heavy, template: templateId, now: now.toISOString(), snoozed: snoozedUntil, others });
        raw.exec("drop table bench_others");
        // The environment's lists of tags, as the engine keeps one for each message it writes.
        const keep = raw.prepare(
          `insert into message_tag_sets (environment_id, id, tags)
           select environment_id, @id, @tags from messages where id = @template
           on conflict do nothing`,
        );
        for (const tags of TAG_LISTS) keep.run({ id: tagSetId(tags), tags, template: templateId });
      })();
      raw.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      raw.close();
    }
  } else {
    const { default: postgres } = await import("postgres");
    const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
    try {
      const columns = (
        await sql<{ column_name: string }[]>`
          select column_name from information_schema.columns
          where table_schema = current_schema() and table_name = 'messages' order by ordinal_position`
      ).map((c) => c.column_name);
      const numbered = (text: string) =>
        text
          .replaceAll("$now", "$1")
          .replaceAll("$count", "$2")
          .replaceAll("$heavy", "$3")
          .replaceAll("$snoozed", "$4");
      await sql.unsafe(
        numbered(
          `with others as (
             select row_number() over (order by s.id) - 1 as k, s.id, s.subscriber_id
             from subscribers s, messages t
             where t.id = $5 and s.environment_id = t.environment_id and s.id <> t.subscriber_ref),
           total as (select count(*) as others from others)
           insert into messages (${columns.map((c) => `"${c}"`).join(", ")})
           select ${columns.map(expression).join(", ")}
           from generate_series(1, $count::int) as seq(n)
             join messages t on t.id = $5
             cross join total
             left join others o on o.k = n % total.others`,
        ),
        [now.toISOString(), count, heavy, snoozedUntil, templateId],
      );
      for (const tags of TAG_LISTS) {
        await sql`
          insert into message_tag_sets (environment_id, id, tags)
          select environment_id, ${tagSetId(tags)}, ${tags} from messages where id = ${templateId}
          on conflict do nothing`;
      }
      // What autovacuum does to a table after this many inserts: the visibility map, which the
      // counts' index-only scans read, and the statistics.
      await sql`vacuum analyze messages`;
      await sql`checkpoint`;
    } finally {
      await sql.end();
    }
  }
  return (performance.now() - started) / 1000;
}

/** The clones' lists of tags (a third each), the first the template's own. */
const TAG_LISTS = ['["billing","alerts"]', '["orders"]', '["security"]'];

/** The plan of a statement, one line per step. */
async function planOf(store: Store, backend: BackendName, query: { compile(): CompiledQuery }) {
  const compiled = query.compile();
  const prefix = backend === "sqlite" ? "explain query plan " : "explain ";
  const result = await store.db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]),
  );
  return result.rows.map((r) => String(r.detail ?? r["QUERY PLAN"])).join("\n");
}

/** The plans of statements run side by side, each under a line that numbers it. */
async function plansOf(store: Store, backend: BackendName, queries: { compile(): CompiledQuery }[]) {
  const plans: string[] = [];
  for (const [i, query] of queries.entries())
    plans.push(`statement ${i + 1} of ${queries.length}:\n${await planOf(store, backend, query)}`);
  return plans.join("\n");
}

/** (b): list and count for a subscriber with `heavy` notifications among `notifications`. */
async function reads(
  ctx: InboxContext,
  db: BenchDatabase,
  env: Environment,
): Promise<NonNullable<InboxFigures["reads"]>> {
  const { settings } = ctx;
  await seedSubscribers(db, env.id, 1, settings.subscribers);
  // The template: a message the engine writes, with everything the inbox shows.
  let service = await ctx.startService(db);
  let templateId: string;
  let subscriberRef: string;
  try {
    const workflow = await createWorkflow(service, env, {
      name: "Inbox reads bench",
      severity: "high",
      tags: ["billing", "alerts"],
      steps: [
        {
          template: {
            type: "in_app",
            content: "Invoice {{n}} is due, {{subscriber.firstName}}",
            subject: "Invoice {{n}}",
            avatar: "https://cdn.example/{{n}}.png",
            data: { invoice: "{{n}}", kind: "invoice", labels: ["x", "red"], meta: { region: "eu" } },
            cta: {
              type: "redirect",
              data: { url: "/invoices/{{n}}" },
              action: {
                buttons: [
                  { type: "primary", content: "Pay {{n}}", url: "/pay/{{n}}" },
                  { type: "secondary", content: "Later" },
                ],
              },
            },
          },
        },
      ],
    });
    const transactionId = `inbox-template-${randomBytes(3).toString("hex")}`;
    await call(
      "POST",
      `${service.url}/v1/events/trigger`,
      { authorization: `ApiKey ${env.apiKey}` },
      {
        name: workflow.name,
        to: "bench-1",
        payload: { n: settings.heavy },
        transactionId,
      },
    );
    const reader = openReader(db);
    try {
      let row: { id: string; subscriber_ref: string } | undefined;
      for (let i = 0; i < 300 && !row; i++) {
        [row] = await reader.all<{ id: string; subscriber_ref: string }>(
          "select id, subscriber_ref from messages where environment_id = ? and transaction_id = ?",
          [env.id, transactionId],
        );
        if (!row) await sleep(100);
      }
      if (!row) throw new Error("the template message was not written");
      templateId = row.id;
      subscriberRef = row.subscriber_ref;
    } finally {
      await reader.close();
    }
  } finally {
    await service.child.stop();
  }

  ctx.log(
    `seeding ${settings.notifications.toLocaleString("en")} messages (${settings.heavy} of one subscriber)`,
  );
  const seedSeconds = await cloneMessages(db, templateId, settings.notifications - 1, settings.heavy);

  service = await ctx.startService(db);
  const store = await openBenchStore(db);
  try {
    const identifier = await applicationIdentifier(service, env);
    const session = await call<{ data: { token: string } }>(
      "POST",
      `${service.url}/v1/inbox/session`,
      {},
      {
        applicationIdentifier: identifier,
        subscriber: { subscriberId: "bench-1" },
      },
    );
    const authorization = `Bearer ${session.data.token}`;

    const measureRoute = async (targets: string[]): Promise<InboxReadFigures> => {
      const base = { url: service.url, apiKey: env.apiKey, authorization, kind: "get" as const, targets };
      const full = await ctx.measure(
        { ...base, start: 0 },
        service.child.pid,
        settings.warmupSeconds,
        settings.seconds,
      );
      const rate = Math.max(1, Math.floor(full.measurement.rps / 2));
      const half = await ctx.load({
        ...base,
        warmupSeconds: 0,
        seconds: settings.halfRateSeconds,
        overallRate: rate,
        start: 0,
      });
      const single = await ctx.load({
        ...base,
        connections: 1,
        warmupSeconds: 0,
        seconds: settings.halfRateSeconds,
        start: 0,
      });
      return {
        service: { ...full.measurement, cpuUsPerRequest: full.cpuUsPerRequest },
        halfRate: { ...half.measurement, rate, autocannonP99: half.autocannonP99 },
        single: single.measurement,
        statement: { p50: 0, p99: 0, max: 0, runs: 0 },
      };
    };
    ctx.log("GET /v1/inbox/notifications, five filters in turn");
    const list = await measureRoute(INBOX_FILTERS.map(listPath));
    ctx.log("GET /v1/inbox/notifications/count, five filters in one request");
    const count = await measureRoute([countPath(INBOX_FILTERS)]);
    ctx.log("GET /v1/inbox/notifications/count, the bell's four filters");
    const bell = await measureRoute([countPath(BELL_FILTERS)]);

    // The statements the service runs, alone: the same filters read by the service's own reader.
    const filters = readCountFilters(JSON.stringify(INBOX_FILTERS)).map((f) => f.filter);
    const bellFilters = readCountFilters(JSON.stringify(BELL_FILTERS)).map((f) => f.filter);
    const page = { limit: 10, offset: 0 };
    const time = async (run: () => Promise<unknown>, runs = settings.statementRuns) => {
      const latencies = new Latencies(runs);
      for (let i = 0; i < Math.min(50, runs); i++) await run();
      for (let i = 0; i < runs; i++) {
        const started = performance.now();
        await run();
        latencies.record(performance.now() - started);
      }
      return { ...latencies.summary(), runs: latencies.count };
    };
    const owner: InboxOwner = { environmentId: env.id, subscriberRef };
    // A count request's filters are counted as the service counts them: the index's statement and
    // the data filters' side by side.
    const counts = (list: typeof filters) => () => countInbox(store.db, owner, list);
    let turn = 0;
    list.statement = await time(async () => {
      const filter = filters[turn++ % filters.length] ?? {};
      await inboxPageQuery(store.db, owner, filter, page).execute();
    });
    count.statement = await time(counts(filters));
    bell.statement = await time(counts(bellFilters));
    const perFilter: FilterStatements[] = [];
    for (const [i, filter] of filters.entries()) {
      const runs = Math.max(1, Math.floor(settings.statementRuns / 5));
      const pageOf = await time(() => inboxPageQuery(store.db, owner, filter, page).execute(), runs);
      const countOf = await time(counts([filter]), runs);
      const [matches] = await countInbox(store.db, owner, [filter]);
      perFilter.push({
        filter: INBOX_FILTERS[i] as Record<string, unknown>,
        list: { p50: pageOf.p50, p99: pageOf.p99 },
        count: { p50: countOf.p50, p99: countOf.p99 },
        matches: matches ?? 0,
      });
    }
    const plans = [];
    for (const [i, filter] of filters.entries()) {
      plans.push({
        filter: INBOX_FILTERS[i] as Record<string, unknown>,
        list: await planOf(store, db.backend, inboxPageQuery(store.db, owner, filter, page)),
        count: await plansOf(store, db.backend, countInboxQueries(store.db, owner, [filter])),
      });
    }
    const countPlans = [
      {
        filters: "the five filters",
        plan: await plansOf(store, db.backend, countInboxQueries(store.db, owner, filters)),
      },
      {
        filters: "the bell's four",
        plan: await plansOf(store, db.backend, countInboxQueries(store.db, owner, bellFilters)),
      },
    ];
    return {
      notifications: settings.notifications,
      heavy: settings.heavy,
      subscribers: settings.subscribers,
      seedSeconds: round(seedSeconds, 1),
      filters: INBOX_FILTERS,
      list,
      count,
      bell,
      perFilter,
      plans,
      countPlans,
    };
  } finally {
    await store.close();
    await service.child.stop();
  }
}

export async function runInbox(
  ctx: InboxContext,
  db: BenchDatabase,
  backend: BackendName,
  seeding: Record<string, number>,
): Promise<InboxFigures> {
  const env = await ctx.environmentOf(db, "Bench inbox");
  const figures: InboxFigures = { backend };
  if (ctx.settings.sockets > 0) {
    ctx.log(`${backend}: inbox, ${ctx.settings.sockets} @novu/js clients`);
    figures.realtime = await realtime(ctx, db, env);
  }
  if (ctx.settings.notifications > 0) {
    figures.reads = await reads(ctx, db, env);
    seeding[`${backend} ${ctx.settings.notifications} inbox messages`] = figures.reads.seedSeconds;
  }
  return figures;
}

const ms = (value: number) => value.toFixed(2);

/** The inbox's lines of the report: its figures, then each filter's plans. */
export function inboxLines(figures: InboxFigures[]): string[] {
  const out: string[] = [];
  for (const f of figures) {
    const r = f.realtime;
    if (r) {
      out.push(
        `inbox ${f.backend}: trigger → notification_received (@novu/js, ${r.sockets.toLocaleString("en")} sockets, ${r.received} of ${r.triggers}): ` +
          `p50 ${ms(r.latency.p50)} ms, p99 ${ms(r.latency.p99)} ms, max ${ms(r.latency.max)} ms; ` +
          `answer p50/p99 ${ms(r.answer.p50)}/${ms(r.answer.p99)}, → message written ${ms(r.toMessage.p50)}/${ms(r.toMessage.p99)}, ` +
          `written → client ${ms(r.toClient.p50)}/${ms(r.toClient.p99)} ms`,
      );
    }
    const reads = f.reads;
    if (reads) {
      for (const [name, figures] of [
        ["GET /v1/inbox/notifications (5 filters in turn)", reads.list],
        ["GET /v1/inbox/notifications/count (the same 5 filters)", reads.count],
        ["GET /v1/inbox/notifications/count (the bell's 4, as <Inbox /> sends them)", reads.bell],
      ] as const) {
        out.push(
          `inbox ${f.backend}: ${name}, ${reads.heavy.toLocaleString("en")} of ${reads.notifications.toLocaleString("en")}: ` +
            `${figures.service.rps.toLocaleString("en")} req/s p50 ${ms(figures.service.p50)} p99 ${ms(figures.service.p99)} ms; ` +
            `at ${figures.halfRate.rate.toLocaleString("en")} req/s p50 ${ms(figures.halfRate.p50)} p99 ${ms(
              Math.max(figures.halfRate.p99, figures.halfRate.autocannonP99),
            )} ms; ` +
            `one at a time p50 ${ms(figures.single.p50)} p99 ${ms(figures.single.p99)} ms; ` +
            `its statements alone p50 ${ms(figures.statement.p50)} p99 ${ms(figures.statement.p99)} ms; ` +
            `CPU ${figures.service.cpuUsPerRequest} µs/req${figures.service.failed > 0 ? `; ${figures.service.failed} failed` : ""}`,
        );
      }
      for (const one of reads.perFilter) {
        out.push(
          `inbox ${f.backend}:   ${JSON.stringify(one.filter)} (${one.matches.toLocaleString("en")} match): ` +
            `page p50/p99 ${ms(one.list.p50)}/${ms(one.list.p99)} ms, count ${ms(one.count.p50)}/${ms(one.count.p99)} ms`,
        );
      }
    }
  }
  for (const f of figures) {
    for (const plan of f.reads?.plans ?? []) {
      out.push(
        `plan ${f.backend} ${JSON.stringify(plan.filter)}`,
        ...plan.list.split("\n").map((l) => `  list:  ${l}`),
        ...plan.count.split("\n").map((l) => `  count: ${l}`),
      );
    }
    for (const plan of f.reads?.countPlans ?? []) {
      out.push(`plan ${f.backend} count, ${plan.filters}`, ...plan.plan.split("\n").map((l) => `  ${l}`));
    }
  }
  return out;
}
