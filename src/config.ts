import path from "node:path";
import { parseOutboundAllow } from "./outbound.ts";

/**
 * What one environment's triggers may do (README, "Quotas"); 0 turns a quota off. Counted when a
 * trigger is accepted: a topic's or a broadcast's recipients are its members then.
 */
export interface Quotas {
  /** QUOTA_RECIPIENTS_PER_TRIGGER: the most subscribers one trigger may reach (its topics and broadcast too). */
  readonly recipientsPerTrigger: number;
  /** QUOTA_RECIPIENTS_PER_MINUTE: the most subscribers the environment's triggers may reach in a minute. */
  readonly recipientsPerMinute: number;
  /** QUOTA_PENDING_JOBS: the most jobs of the environment that may wait or run at once. */
  readonly pendingJobs: number;
}

/** Everything the process reads from its environment, validated once, typed and frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly pgPoolSize: number;
  readonly logLevel: string;
  readonly bodyLimit: number;
  readonly rateLimitRps: number;
  readonly rateLimitBurst: number;
  readonly redisUrl: string | undefined;
  readonly trustProxy: boolean;
  readonly corsOrigins: readonly string[];
  readonly requestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly metrics: "off" | "on";
  readonly metricsToken: string | undefined;
  /** METRICS_PUBLIC: /metrics answers without a token (without one and without this, it answers 401). */
  readonly metricsPublic: boolean;
  /** Whether key-guarded routes may authenticate from memory (src/auth/key-verifier.ts). */
  readonly keyCache: boolean;
  /** SQLite: checkpoint the write-ahead log from a worker thread (src/store/sqlite-checkpointer.ts). */
  readonly sqliteBackgroundCheckpoints: boolean;
  /** SQLite: where a commit's fsync runs (see StoreOptions.sqliteSync). */
  readonly sqliteSync: "fdatasync" | "full";
  /** Which parts this process runs: the API, the job-queue worker, or both. */
  readonly role: Role;
  /** How many queued tasks the worker runs at once. */
  readonly workerConcurrency: number;
  /**
   * PostgreSQL: how often (real time) a worker process renews its workers' heartbeat and looks for
   * workers of dead processes (src/engine/queue/graphile-queue.ts).
   */
  readonly workerHeartbeatMs: number;
  /**
   * PostgreSQL: how long after its last heartbeat a worker is presumed dead and its locked tasks
   * are handed back to run again. Longer than any pause a live worker may have (a blocked event
   * loop, a network split): a live worker presumed dead has its tasks run twice.
   */
  readonly workerDeadAfterMs: number;
  /**
   * TIDINGS_SECRET_KEY: the 32-byte key that seals integration credentials (AES-256-GCM), as 64 hex
   * digits or base64. Unset: generated once into DATA_DIR for the embedded SQLite default; required
   * with DATABASE_URL (main.ts refuses to start without it).
   */
  readonly secretKey: Buffer | undefined;
  /** How long a chat webhook may take to answer, whole (WEBHOOK_TIMEOUT_MS). */
  readonly webhookTimeoutMs: number;
  /** How long an SMTP server may take to accept a connection, and then to greet (SMTP_TIMEOUT_MS). */
  readonly smtpTimeoutMs: number;
  /**
   * Calls to a code-first workflow app's bridge (src/bridge-client.ts): each may take BRIDGE_TIMEOUT_MS
   * (5 s); a timeout, network failure, 408, 429 or 5xx is tried again BRIDGE_RETRIES times (3), after
   * BRIDGE_RETRY_BASE_MS (1 s), doubled each time.
   */
  readonly bridge: { readonly timeoutMs: number; readonly retries: number; readonly retryBaseMs: number };
  /**
   * What rendering a step's templates may spend (RENDER_TIMEOUT_MS, 50 ms for a step's fields
   * together; RENDER_MAX_BYTES, 256 KiB a field): past either, the step fails (src/engine/render.ts).
   */
  readonly render: { readonly timeoutMs: number; readonly maxBytes: number };
  /**
   * Internal hosts and networks the service may connect to on a caller's behalf all the same
   * (TIDINGS_OUTBOUND_ALLOW: host names, addresses, CIDR ranges); none by default (src/outbound.ts).
   */
  readonly outboundAllow: readonly string[];
  /** How long an inbox widget session's token is good for (WIDGET_SESSION_TTL_S, 7 days). */
  readonly widgetSessionTtlS: number;
  /** How many inbox sockets one subscriber may hold open on one process (WIDGET_SOCKETS_PER_SUBSCRIBER). */
  readonly widgetSocketsPerSubscriber: number;
  /**
   * How many new subscribers inbox sessions (which need no API key) may create per minute in one
   * environment, on one process (SESSION_NEW_SUBSCRIBERS_PER_MINUTE); 0: no limit.
   */
  readonly sessionNewSubscribersPerMinute: number;
  /**
   * How far ahead the inbox may snooze a notification (INBOX_MAX_SNOOZE_DURATION_HOURS, 90 days);
   * 0 turns snoozing off, and Novu's inbox then hides it.
   */
  readonly inboxMaxSnoozeDurationHours: number;
  readonly quotas: Quotas;
}

export const ROLES = ["all", "api", "worker"] as const;
export type Role = (typeof ROLES)[number];

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw ? raw : undefined;
}

function outboundAllow(env: Env): string[] {
  try {
    return parseOutboundAllow(optional(env, "TIDINGS_OUTBOUND_ALLOW") ?? "");
  } catch (error) {
    throw new ConfigError(`TIDINGS_OUTBOUND_ALLOW: ${(error as Error).message}`);
  }
}

function databaseUrl(env: Env): string | undefined {
  const url = optional(env, "DATABASE_URL");
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL");
  }
  return url;
}

/**
 * A 32-byte key from its text form: 64 hex digits, or base64 (standard or URL-safe, padding
 * optional). Anything else is refused, so a typo cannot become a weaker key.
 */
export function decodeSecretKey(text: string, name = "TIDINGS_SECRET_KEY"): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, "base64")
      : undefined;
  if (key?.length !== 32) {
    throw new ConfigError(
      `${name} must be 32 random bytes as 64 hex digits or base64 (e.g. the output of "openssl rand -base64 32")`,
    );
  }
  return key;
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = optional(env, "LOG_LEVEL") ?? "info";
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  const metrics = optional(env, "METRICS") ?? "on";
  if (metrics !== "on" && metrics !== "off") throw new ConfigError(`METRICS must be "on" or "off"`);
  const metricsToken = optional(env, "METRICS_TOKEN");
  const metricsPublic = flag(env, "METRICS_PUBLIC", false);
  if (metricsToken !== undefined && metricsPublic) {
    throw new ConfigError("METRICS_TOKEN and METRICS_PUBLIC contradict each other: set one of them");
  }
  const rateLimitRps = integer(env, "RATE_LIMIT_RPS", 1000, 0, 10_000_000);
  const sqliteSync = optional(env, "SQLITE_SYNC") ?? "fdatasync";
  if (sqliteSync !== "fdatasync" && sqliteSync !== "full") {
    throw new ConfigError(`SQLITE_SYNC must be fdatasync or full, got "${sqliteSync}"`);
  }
  const role = optional(env, "TIDINGS_ROLE") ?? "all";
  const secretKey = optional(env, "TIDINGS_SECRET_KEY");
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new ConfigError(`TIDINGS_ROLE must be one of ${ROLES.join(", ")}, got "${role}"`);
  }
  const postgresUrl = databaseUrl(env);
  const workerHeartbeatMs = integer(env, "WORKER_HEARTBEAT_MS", 5_000, 50, 600_000);
  const workerDeadAfterMs = integer(env, "WORKER_DEAD_AFTER_MS", 30_000, 100, 86_400_000);
  if (workerDeadAfterMs < 2 * workerHeartbeatMs) {
    throw new ConfigError(
      `WORKER_DEAD_AFTER_MS (${workerDeadAfterMs}) must be at least twice WORKER_HEARTBEAT_MS (${workerHeartbeatMs})`,
    );
  }
  const quotas = Object.freeze({
    recipientsPerTrigger: integer(env, "QUOTA_RECIPIENTS_PER_TRIGGER", 10_000, 0, 100_000_000),
    recipientsPerMinute: integer(env, "QUOTA_RECIPIENTS_PER_MINUTE", 20_000, 0, 100_000_000),
    pendingJobs: integer(env, "QUOTA_PENDING_JOBS", 1_000_000, 0, 1_000_000_000),
  });
  if (
    quotas.recipientsPerMinute > 0 &&
    (quotas.recipientsPerTrigger === 0 || quotas.recipientsPerTrigger > quotas.recipientsPerMinute)
  ) {
    throw new ConfigError(
      `QUOTA_RECIPIENTS_PER_TRIGGER (${quotas.recipientsPerTrigger || "0: no limit"}) must be at most ` +
        `QUOTA_RECIPIENTS_PER_MINUTE (${quotas.recipientsPerMinute}): a larger trigger could never be accepted`,
    );
  }
  return Object.freeze({
    port: integer(env, "PORT", 3000, 0, 65535),
    host: optional(env, "HOST") ?? "0.0.0.0",
    dataDir: path.resolve(optional(env, "DATA_DIR") ?? "./data"),
    databaseUrl: postgresUrl,
    pgPoolSize: integer(env, "PG_POOL_SIZE", 10, 1, 1000),
    logLevel,
    bodyLimit: integer(env, "BODY_LIMIT", 1024 * 1024, 1024, 100 * 1024 * 1024),
    rateLimitRps,
    rateLimitBurst: integer(env, "RATE_LIMIT_BURST", rateLimitRps * 2, 0, 20_000_000),
    redisUrl: optional(env, "REDIS_URL"),
    trustProxy: flag(env, "TRUST_PROXY", false),
    corsOrigins: Object.freeze(
      (optional(env, "CORS_ORIGINS") ?? "")
        .split(",")
        .map((origin) => origin.trim())
        .filter(Boolean),
    ),
    requestTimeoutMs: integer(env, "REQUEST_TIMEOUT_MS", 30_000, 100, 600_000),
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10_000, 100, 600_000),
    metrics,
    metricsToken,
    metricsPublic,
    keyCache: flag(env, "KEY_CACHE", true),
    sqliteBackgroundCheckpoints: flag(env, "SQLITE_BACKGROUND_CHECKPOINTS", true),
    sqliteSync,
    role: role as Role,
    // A task holds no connection while it waits (PostgreSQL: it takes one of the store's pool for
    // each statement or transaction), and the tasks running at once share commits: SQLite's group
    // commit, and the due delays run together (engine/due-delays.ts), so more of them share each.
    workerConcurrency: integer(env, "WORKER_CONCURRENCY", 32, 1, 1000),
    workerHeartbeatMs,
    workerDeadAfterMs,
    secretKey: secretKey === undefined ? undefined : decodeSecretKey(secretKey),
    webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10_000, 50, 600_000),
    smtpTimeoutMs: integer(env, "SMTP_TIMEOUT_MS", 10_000, 50, 600_000),
    bridge: Object.freeze({
      timeoutMs: integer(env, "BRIDGE_TIMEOUT_MS", 5_000, 50, 600_000),
      retries: integer(env, "BRIDGE_RETRIES", 3, 0, 10),
      retryBaseMs: integer(env, "BRIDGE_RETRY_BASE_MS", 1_000, 0, 60_000),
    }),
    render: Object.freeze({
      timeoutMs: integer(env, "RENDER_TIMEOUT_MS", 50, 1, 60_000),
      maxBytes: integer(env, "RENDER_MAX_BYTES", 256 * 1024, 1024, 64 * 1024 * 1024),
    }),
    outboundAllow: Object.freeze(outboundAllow(env)),
    widgetSessionTtlS: integer(env, "WIDGET_SESSION_TTL_S", 7 * 86_400, 60, 365 * 86_400),
    widgetSocketsPerSubscriber: integer(env, "WIDGET_SOCKETS_PER_SUBSCRIBER", 10, 1, 10_000),
    sessionNewSubscribersPerMinute: integer(env, "SESSION_NEW_SUBSCRIBERS_PER_MINUTE", 60, 0, 1_000_000),
    inboxMaxSnoozeDurationHours: integer(env, "INBOX_MAX_SNOOZE_DURATION_HOURS", 2160, 0, 87_600),
    quotas,
  });
}
