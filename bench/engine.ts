// The trigger engine under load (issue 10): how many triggers the service acknowledges a second,
// how many messages its worker delivers a second, how long a trigger takes to reach the feed at
// half the acknowledged rate, and one trigger to a topic of 100,000 subscribers. Run by run.ts,
// per backend, in the same run as the PUT status figures they are judged against.
import { randomBytes } from "node:crypto";
import type { LoadResult, LoadSpec } from "./load.ts";
import { type Child, cpuMs, procStatusKb } from "./proc.ts";
import type { FanOutFigures, Row, TriggerFigures } from "./report.ts";
import {
  type BackendName,
  type BenchDatabase,
  type DbReader,
  type Environment,
  epochMs,
  openReader,
  seedSubscribers,
  seedTopic,
} from "./seed.ts";
import { Latencies, round } from "./stats.ts";
import type { TriggerLoadResult, TriggerLoadSpec } from "./trigger-load.ts";

export interface EngineSettings {
  seconds: number;
  warmupSeconds: number;
  halfRateSeconds: number;
  connections: number;
  triggerSubscribers: number;
  triggerBatch: number;
  fanOutSubscribers: number;
  /** How long to wait for the worker to deliver what was acknowledged, per wait. */
  drainTimeoutSeconds: number;
  /** How long to wait for a fan-out's messages; 0: until they all exist. */
  fanOutTimeoutSeconds: number;
}

interface Service {
  child: Child;
  url: string;
}

type Answer = { status: number; body: Buffer };

/** What run.ts lends: its service, load and request helpers. */
export interface EngineContext {
  settings: EngineSettings;
  log(message: string): void;
  startService(db: BenchDatabase): Promise<Service>;
  environmentOf(db: BenchDatabase, name: string): Promise<Environment>;
  request(url: string, method: string, apiKey: string, body?: unknown): Promise<Answer>;
  measure(
    spec: Omit<LoadSpec, "connections" | "warmupSeconds" | "seconds">,
    pid: number,
    warmupSeconds: number,
    seconds: number,
  ): Promise<LoadResult & { cpuUsPerRequest: number }>;
  triggerLoad(
    spec: Omit<TriggerLoadSpec, "url" | "apiKey" | "connections">,
    service: Service,
    apiKey: string,
  ): Promise<TriggerLoadResult>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tag = () => randomBytes(4).toString("hex");

async function json2xx<T>(ctx: EngineContext, url: string, method: string, apiKey: string, body?: unknown) {
  const res = await ctx.request(url, method, apiKey, body);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body.toString()}`);
  return JSON.parse(res.body.toString()) as T;
}

/** An active workflow with one in-app step, made through the API; returns its trigger identifier. */
async function inAppWorkflow(ctx: EngineContext, service: Service, env: Environment, name: string) {
  const groups = await json2xx<{ data: { _id: string }[] }>(
    ctx,
    `${service.url}/v1/notification-groups`,
    "GET",
    env.apiKey,
  );
  const group = groups.data[0];
  if (!group) throw new Error("the environment has no notification group");
  const created = await json2xx<{ data: { triggers: { identifier: string }[] } }>(
    ctx,
    `${service.url}/v1/workflows`,
    "POST",
    env.apiKey,
    {
      name,
      notificationGroupId: group._id,
      active: true,
      steps: [
        { template: { type: "in_app", content: "Hello {{subscriber.firstName}}, event {{payload.n}}" } },
      ],
    },
  );
  const identifier = created.data.triggers[0]?.identifier;
  if (!identifier) throw new Error("the workflow has no trigger identifier");
  return identifier;
}

async function trigger(ctx: EngineContext, service: Service, env: Environment, body: unknown) {
  const started = performance.now();
  const ack = await json2xx<{ data: { status: string; transactionId: string } }>(
    ctx,
    `${service.url}/v1/events/trigger`,
    "POST",
    env.apiKey,
    body,
  );
  const ms = performance.now() - started;
  if (ack.data.status !== "processed") throw new Error(`the trigger was answered ${ack.data.status}`);
  return { ms, transactionId: ack.data.transactionId };
}

async function count(reader: DbReader, query: string, params: unknown[]): Promise<number> {
  const [row] = await reader.all<{ n: number | string }>(query, params);
  return Number(row?.n ?? 0);
}

/** Polls `current` until it reaches `goal` or `timeoutSeconds` pass; the last value and whether it got there. */
async function waitFor(
  current: () => Promise<number>,
  goal: number,
  timeoutSeconds: number,
  everyMs = 200,
): Promise<{ value: number; reached: boolean; seconds: number }> {
  const started = performance.now();
  for (;;) {
    const value = await current();
    const seconds = (performance.now() - started) / 1000;
    if (value >= goal) return { value, reached: true, seconds };
    if (seconds >= timeoutSeconds) return { value, reached: false, seconds };
    await sleep(everyMs);
  }
}

const messagesOf = (reader: DbReader, environmentId: string) => () =>
  count(reader, "select count(*) as n from messages where environment_id = ?", [environmentId]);
const triggersOf = (reader: DbReader, environmentId: string) => () =>
  count(reader, "select count(*) as n from triggers where environment_id = ? and status = 'processed'", [
    environmentId,
  ]);
const messagesLike = (reader: DbReader, environmentId: string, prefix: string) => () =>
  count(reader, "select count(*) as n from messages where environment_id = ? and transaction_id like ?", [
    environmentId,
    `${prefix}-%`,
  ]);

/**
 * Triggers of an active in-app workflow, one pre-seeded subscriber each: (1) acknowledged per
 * second with the connections of every other scenario, (2) a fixed batch from its first trigger
 * until its last message exists, (3) open loop at half the acknowledged rate, each trigger timed
 * from when it was due to its message's createdAt.
 */
export async function runTriggers(
  ctx: EngineContext,
  db: BenchDatabase,
  backend: BackendName,
  seeding: Record<string, number>,
): Promise<{ row: Row; figures: TriggerFigures }> {
  const s = ctx.settings;
  const env = await ctx.environmentOf(db, "Bench triggers");
  seeding[`${backend} ${s.triggerSubscribers} trigger subscribers`] = await seedSubscribers(
    db,
    env.id,
    1,
    s.triggerSubscribers,
  );
  const subscribers = Array.from({ length: s.triggerSubscribers }, (_, i) => `bench-${i + 1}`);
  const reader = openReader(db);
  const service = await ctx.startService(db);
  try {
    const name = await inAppWorkflow(ctx, service, env, "Bench in-app");
    // One trigger through, first: the workflow runs and its worker writes the message.
    await trigger(ctx, service, env, { name, to: subscribers[0], transactionId: `check-${tag()}` });
    const checked = await waitFor(messagesOf(reader, env.id), 1, 30);
    if (!checked.reached) throw new Error("the worker wrote no message for a trigger within 30 s");

    // (1) Acknowledged per second, as PUT status is measured: autocannon, warm-up, measured window.
    ctx.log(`${backend}: triggers acknowledged per second`);
    const ack = await ctx.measure(
      { url: service.url, apiKey: env.apiKey, kind: "trigger", name, targets: subscribers, start: 0 },
      service.child.pid,
      s.warmupSeconds,
      s.seconds,
    );
    const accepted = await triggersOf(reader, env.id)();
    const deliveredThen = await messagesOf(reader, env.id)();
    ctx.log(`${backend}: ${accepted - deliveredThen} triggers not delivered yet; waiting for the worker`);
    const drain = await waitFor(messagesOf(reader, env.id), accepted, s.drainTimeoutSeconds, 500);

    // (2) A fixed batch, from its first trigger until the worker has written its last message.
    ctx.log(`${backend}: a batch of ${s.triggerBatch} triggers until all are delivered`);
    const batchTag = `batch-${tag()}`;
    const batchCpuBefore = cpuMs(service.child.pid);
    const batch = await ctx.triggerLoad(
      { name, subscribers, start: 0, tag: batchTag, mode: "batch", count: s.triggerBatch },
      service,
      env.apiKey,
    );
    const batchDone = await waitFor(
      messagesLike(reader, env.id, batchTag),
      batch.ok,
      s.drainTimeoutSeconds,
      100,
    );
    const batchCpu = cpuMs(service.child.pid) - batchCpuBefore;
    const [lastBatch] = await reader.all<{ last: unknown }>(
      "select max(created_at) as last from messages where environment_id = ? and transaction_id like ?",
      [env.id, `${batchTag}-%`],
    );
    const batchSeconds = (epochMs(lastBatch?.last) - batch.firstSendMs) / 1000;

    // (3) Open loop at half the acknowledged rate: trigger → message, per trigger.
    const rate = Math.max(1, Math.floor(ack.measurement.rps / 2));
    ctx.log(`${backend}: trigger → feed at ${rate} triggers/s`);
    const latencyTag = `lat-${tag()}`;
    const open = await ctx.triggerLoad(
      { name, subscribers, start: 0, tag: latencyTag, mode: "rate", rate, seconds: s.halfRateSeconds },
      service,
      env.apiKey,
    );
    const openDone = await waitFor(
      messagesLike(reader, env.id, latencyTag),
      open.ok,
      s.drainTimeoutSeconds,
      100,
    );
    const created = new Map<string, number>();
    for (const row of await reader.all<{ transaction_id: string; created_at: unknown }>(
      "select transaction_id, created_at from messages where environment_id = ? and transaction_id like ?",
      [env.id, `${latencyTag}-%`],
    ))
      created.set(row.transaction_id, epochMs(row.created_at));
    const received = new Map<string, number>();
    for (const row of await reader.all<{ transaction_id: string; created_at: unknown }>(
      "select transaction_id, created_at from triggers where environment_id = ? and transaction_id like ?",
      [env.id, `${latencyTag}-%`],
    ))
      received.set(row.transaction_id, epochMs(row.created_at));
    const toFeed = new Latencies(open.sent.length + 1);
    const inService = new Latencies(open.sent.length + 1);
    for (const [n, dueMs] of open.sent) {
      const id = `${latencyTag}-${n}`;
      const at = created.get(id);
      if (at === undefined) continue;
      toFeed.record(at - dueMs);
      const receivedAt = received.get(id);
      if (receivedAt !== undefined) inService.record(at - receivedAt);
    }
    const feed = toFeed.summary();
    const server = inService.summary();
    const statusCodes: Record<string, number> = ack.statusCodes;
    return {
      row: {
        scenario: "trigger",
        label: "POST /v1/events/trigger (1 subscriber)",
        backend,
        service: {
          ...ack.measurement,
          peakRssMb: Math.round(service.child.peakRssMb()),
          cpuUsPerRequest: ack.cpuUsPerRequest,
          statusCodes,
        },
        halfRate: {
          rps: round(open.ok / s.halfRateSeconds, 0),
          ...open.answer,
          ok: open.ok,
          failed: open.failed,
          seconds: s.halfRateSeconds,
          rate,
          autocannonP99: open.answer.p99,
        },
        note: "the worker runs in the service process (TIDINGS_ROLE=all) and delivers while the triggers come in",
      },
      figures: {
        backend,
        subscribers: s.triggerSubscribers,
        acknowledged: {
          rps: ack.measurement.rps,
          triggers: ack.measurement.ok,
          failed: ack.measurement.failed,
        },
        backlog: {
          accepted,
          undelivered: accepted - deliveredThen,
          drainSeconds: round(drain.seconds, 1),
          drained: drain.reached,
        },
        delivered: {
          batch: s.triggerBatch,
          acknowledged: batch.ok,
          failed: batch.failed,
          messages: batchDone.value,
          complete: batchDone.reached,
          answeredSeconds: round((batch.lastAnswerMs - batch.firstSendMs) / 1000),
          seconds: round(batchSeconds),
          rps: batchDone.reached && batchSeconds > 0 ? round(batchDone.value / batchSeconds, 0) : 0,
          cpuUsPerTrigger: batchDone.value > 0 ? Math.round((batchCpu * 1000) / batchDone.value) : 0,
        },
        latency: {
          rate,
          seconds: s.halfRateSeconds,
          triggers: open.ok,
          failed: open.failed,
          messages: openDone.value,
          complete: openDone.reached,
          answerP50: open.answer.p50,
          answerP99: open.answer.p99,
          p50: feed.p50,
          p99: feed.p99,
          max: feed.max,
          serverP50: server.p50,
          serverP99: server.p99,
        },
      },
    };
  } finally {
    await service.child.stop();
    await reader.close();
  }
}

/**
 * One trigger to a topic of `fanOutSubscribers` subscribers (seeded in SQL): its answer time
 * against single-subscriber triggers', the time until every message exists, and the service's
 * resident memory meanwhile.
 */
export async function runFanOut(
  ctx: EngineContext,
  db: BenchDatabase,
  backend: BackendName,
  seeding: Record<string, number>,
): Promise<FanOutFigures> {
  const s = ctx.settings;
  const env = await ctx.environmentOf(db, "Bench fan-out");
  const size = s.fanOutSubscribers;
  seeding[`${backend} ${size} topic subscribers`] =
    (await seedSubscribers(db, env.id, 1, size)) + (await seedTopic(db, env.id, "bench-topic"));
  const reader = openReader(db);
  // A service of its own, so that its peak RSS is this scenario's.
  const service = await ctx.startService(db);
  let sampler: NodeJS.Timeout | undefined;
  try {
    const name = await inAppWorkflow(ctx, service, env, "Bench fan-out");
    // Single-subscriber triggers first, one at a time, on the same idle service.
    const single = new Latencies(64);
    const singles = 21;
    for (let i = 0; i < singles; i++) {
      const { ms } = await trigger(ctx, service, env, {
        name,
        to: `bench-${i + 1}`,
        transactionId: `one-${tag()}`,
      });
      if (i > 0) single.record(ms);
    }
    await waitFor(messagesOf(reader, env.id), singles, 30);

    const pid = service.child.pid;
    const rssBeforeKb = procStatusKb(pid, "VmRSS");
    let sampledPeakKb = rssBeforeKb;
    sampler = setInterval(() => {
      sampledPeakKb = Math.max(sampledPeakKb, procStatusKb(pid, "VmRSS"));
    }, 50);
    ctx.log(`${backend}: one trigger to a topic of ${size.toLocaleString("en")} subscribers`);
    const cpuBefore = cpuMs(pid);
    const sentAt = Date.now();
    const fan = await trigger(ctx, service, env, {
      name,
      to: [{ type: "Topic", topicKey: "bench-topic" }],
      transactionId: `fan-${tag()}`,
    });
    const ofFan = () =>
      count(reader, "select count(*) as n from messages where environment_id = ? and transaction_id = ?", [
        env.id,
        fan.transactionId,
      ]);
    let lastLog = Date.now();
    const done = await waitFor(
      async () => {
        const n = await ofFan();
        if (Date.now() - lastLog > 15_000) {
          lastLog = Date.now();
          ctx.log(`${backend}: ${n.toLocaleString("en")} of ${size.toLocaleString("en")} messages`);
        }
        return n;
      },
      size,
      s.fanOutTimeoutSeconds > 0 ? s.fanOutTimeoutSeconds : Number.POSITIVE_INFINITY,
      250,
    );
    clearInterval(sampler);
    sampler = undefined;
    const peakKb = procStatusKb(pid, "VmHWM");
    const cpu = cpuMs(pid) - cpuBefore;
    const [notifications] = await reader.all<{ n: number | string; last: unknown }>(
      "select count(*) as n, max(created_at) as last from notifications where environment_id = ? and transaction_id = ?",
      [env.id, fan.transactionId],
    );
    const [messages] = await reader.all<{ last: unknown }>(
      "select max(created_at) as last from messages where environment_id = ? and transaction_id = ?",
      [env.id, fan.transactionId],
    );
    // Complete: to the last message's createdAt; cut short: to the last count.
    const messagesSeconds =
      done.reached && messages?.last ? (epochMs(messages.last) - sentAt) / 1000 : done.seconds;
    const perSecond = messagesSeconds > 0 ? done.value / messagesSeconds : 0;
    const singleStats = single.summary();
    return {
      backend,
      subscribers: size,
      answerMs: round(fan.ms),
      singleAnswerMs: { p50: singleStats.p50, max: singleStats.max, n: single.count },
      notifications: Number(notifications?.n ?? 0),
      notificationsSeconds: notifications?.last ? round((epochMs(notifications.last) - sentAt) / 1000) : 0,
      messages: done.value,
      complete: done.reached,
      messagesSeconds: round(messagesSeconds),
      messagesPerSecond: round(perSecond, 0),
      projectedSeconds: done.reached
        ? round(messagesSeconds)
        : perSecond > 0
          ? Math.round(size / perSecond)
          : 0,
      cpuUsPerMessage: done.value > 0 ? Math.round((cpu * 1000) / done.value) : 0,
      rssBeforeMb: Math.round(rssBeforeKb / 1024),
      sampledPeakRssMb: Math.round(sampledPeakKb / 1024),
      peakRssMb: Math.round(peakKb / 1024),
    };
  } finally {
    if (sampler) clearInterval(sampler);
    await service.child.stop();
    await reader.close();
  }
}
