import { createHash, timingSafeEqual } from "node:crypto";
import { sql } from "kysely";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { App } from "../http/types.ts";
import type { Store } from "../store/store.ts";
import { pingTimeoutMs, withTimeout } from "./health.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** Counts a refused request (set when metrics are on). */
    rateLimited?: (key: string) => void;
    /** Counts an inbox widget usage event by its name (set when metrics are on). */
    widgetUsage?: (name: string) => void;
    /** How many inbox sockets this process holds (set by app.ts). */
    inboxSockets?: () => number;
  }
}

/** How many distinct widget usage names get their own label. */
const WIDGET_USAGE_NAMES = 50;

const digest = (value: string) => createHash("sha256").update(value).digest();

/** True when the header is `Bearer <token>`; compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), digest(token));
}

/**
 * `GET /metrics` in Prometheus' text format: requests and their latency per route and status, rate
 * limit refusals, draining, the database's answer time and (PostgreSQL) its connections, and the
 * process's own figures. METRICS=off removes the route; METRICS_TOKEN requires `Bearer <token>`;
 * without it the route answers 401 unless METRICS_PUBLIC opens it to everyone.
 */
export function registerMetrics(app: App, store: Store, config: Config): void {
  if (config.metrics === "off") return;
  const registry = new Registry();
  // The event-loop delay is sampled every 100 ms, not prom-client's 10: a timer every 10 ms woke an
  // idle service a hundred times a second, about 1.5% of a core on a small machine (bench/idle.ts).
  collectDefaultMetrics({ register: registry, prefix: "tidings_", eventLoopMonitoringPrecision: 100 });

  const labelNames = ["method", "route", "status_code"] as const;
  const requests = new Counter({
    name: "tidings_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status code",
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "tidings_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by method, route pattern and status code",
    labelNames,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: "tidings_http_requests_in_flight",
    help: "Requests being handled now",
    registers: [registry],
  });
  const limited = new Counter({
    name: "tidings_rate_limited_total",
    help: "Requests refused with 429, by what the bucket belongs to (env or ip)",
    labelNames: ["bucket"],
    registers: [registry],
  });
  new Gauge({
    name: "tidings_draining",
    help: "1 while the process is shutting down",
    registers: [registry],
    collect() {
      this.set(app.draining ? 1 : 0);
    },
  });
  new Gauge({
    name: "tidings_db_pool_size",
    help: "Connections this process may open to the database (SQLite: one)",
    labelNames: ["backend"],
    registers: [registry],
    collect() {
      this.set({ backend: store.backend }, store.backend === "sqlite" ? 1 : config.pgPoolSize);
    },
  });
  const dbUp = new Gauge({
    name: "tidings_db_up",
    help: "1 when the database answered a ping during this scrape",
    registers: [registry],
  });
  const dbPing = new Gauge({
    name: "tidings_db_ping_seconds",
    help: "How long the database took to answer a ping during this scrape",
    registers: [registry],
  });
  const dbConnections = new Gauge({
    name: "tidings_db_connections",
    help: "PostgreSQL: connections to this database by this user (all Tidings processes), by state",
    labelNames: ["state"],
    registers: [registry],
  });

  app.decorate("rateLimited", (key: string) => limited.inc({ bucket: key.slice(0, key.indexOf(":")) }));

  new Gauge({
    name: "tidings_inbox_sockets",
    help: "Inbox widget sockets this process holds",
    registers: [registry],
    collect() {
      this.set(app.inboxSockets?.() ?? 0);
    },
  });
  // The widget names its events; a client could send any name, so the label takes the first
  // WIDGET_USAGE_NAMES distinct ones it sees and counts the rest as "other".
  const usage = new Counter({
    name: "tidings_widget_usage_total",
    help: "Usage events the inbox widget logged (POST /v1/widgets/usage/log), by name",
    labelNames: ["name"],
    registers: [registry],
  });
  const usageNames = new Set<string>();
  app.decorate("widgetUsage", (name: string) => {
    const label = name.slice(0, 80);
    if (!usageNames.has(label) && usageNames.size < WIDGET_USAGE_NAMES) usageNames.add(label);
    usage.inc({ name: usageNames.has(label) ? label : "other" });
  });

  app.addHook("onRequest", (_request, _reply, done) => {
    inFlight.inc();
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    inFlight.dec();
    const labels = {
      method: request.method,
      // The pattern, not the URL: ids must not become label values.
      route: request.routeOptions.url ?? "(unmatched)",
      status_code: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  async function measureDatabase() {
    const start = performance.now();
    try {
      await withTimeout(store.ping(), pingTimeoutMs(config), "database ping");
      dbUp.set(1);
      dbPing.set((performance.now() - start) / 1000);
    } catch {
      dbUp.set(0);
      return;
    }
    if (store.backend !== "postgres") return;
    try {
      const { rows } = await withTimeout(
        sql<{ state: string | null; n: number }>`
          select state, count(*)::int as n from pg_stat_activity
          where datname = current_database() and usename = current_user group by state`.execute(store.db),
        pingTimeoutMs(config),
        "pg_stat_activity",
      );
      dbConnections.reset();
      for (const row of rows) dbConnections.set({ state: row.state ?? "unknown" }, Number(row.n));
    } catch (error) {
      app.log.warn({ err: error }, "metrics: could not read pg_stat_activity");
    }
  }

  app.get("/metrics", { schema: { hide: true } }, async (request, reply) => {
    // Closed unless opened on purpose: route names, request counts and timings, pool sizes and the
    // process's memory tell a stranger how the service is used. Closed is a 401 rather than a 404:
    // the scraper that meets it is one its operator set up, and the answer says what to set.
    if (config.metricsToken === undefined && !config.metricsPublic) {
      throw new ApiError(
        401,
        "Metrics are closed: set METRICS_TOKEN and send Authorization: Bearer <METRICS_TOKEN>, or open them to " +
          "everyone with METRICS_PUBLIC=1",
        undefined,
        { "www-authenticate": "Bearer" },
      );
    }
    if (
      config.metricsToken !== undefined &&
      !bearerMatches(request.headers.authorization, config.metricsToken)
    ) {
      throw new ApiError(401, "Metrics need Authorization: Bearer <METRICS_TOKEN>", undefined, {
        "www-authenticate": "Bearer",
      });
    }
    await measureDatabase();
    reply.header("content-type", registry.contentType);
    reply.header("cache-control", "no-store");
    return registry.metrics();
  });
  app.addHook("onClose", async () => registry.clear());
}
