import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, {
  errorCodes,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RouteOptions,
} from "fastify";
import pino from "pino";
import { activityRoutes } from "./activity/routes.ts";
import {
  authenticate,
  cachedKeys,
  confirmRememberedKey,
  type KeyLookup,
  type KeyVerifier,
  uncachedKeys,
} from "./auth/authenticate.ts";
import { type Clock, systemClock } from "./clock.ts";
import { type Config, loadConfig } from "./config.ts";
import { type JobQueue, openQueue } from "./engine/queue/index.ts";
import { engineSubscriberErasure, previewStep, Renderer, registerOpenJobsFolding } from "./engine/service.ts";
import { environmentV1Routes, environmentV2Routes } from "./environments/routes.ts";
import { badRequest, errorBody } from "./errors.ts";
import { eventRoutes } from "./events/routes.ts";
import { feedRoutes } from "./feeds/routes.ts";
import { handleFrameworkError, pathOf, sendError } from "./http/error-handler.ts";
import { parseQueryString } from "./http/query-string.ts";
import { serializerCompiler } from "./http/serialization.ts";
import type { App } from "./http/types.ts";
import { inspectBody, MAX_BODY_DEPTH, validatorCompiler } from "./http/validation.ts";
import { registerIdempotencyKeyPurge } from "./idempotency/purge.ts";
import { inboxRoutes, inboxSessionRoutes, subscriberNotificationRoutes } from "./inbox/routes.ts";
import { type InboxChange, SessionTokens } from "./inbox/service.ts";
import { integrationRoutes } from "./integrations/routes.ts";
import { channelSenders, type IntegrationTools, openIntegrationTools } from "./integrations/service.ts";
import { layoutRoutes, layoutV2Routes } from "./layouts/routes.ts";
import { notificationGroupRoutes } from "./notification-groups/routes.ts";
import { clientErrorHandler, requireHost } from "./ops/client-errors.ts";
import { registerDashboard } from "./ops/dashboard.ts";
import { registerHealth } from "./ops/health.ts";
import { registerLifecycle } from "./ops/lifecycle.ts";
import { registerMetrics } from "./ops/metrics.ts";
import { registerRateLimit } from "./ops/rate-limit.ts";
import { docsCsp, registerSecurity } from "./ops/security.ts";
import { LocalBuckets } from "./ops/token-bucket.ts";
import { organizationRoutes } from "./organizations/routes.ts";
import type { Store } from "./store/store.ts";
import { subscriberRoutes, subscriberV2Routes } from "./subscribers/routes.ts";
import { environmentRoutes } from "./tenancy/routes.ts";
import { findKeyOwner } from "./tenancy/service.ts";
import type { Tenant } from "./tenant.ts";
import { tenantRoutes } from "./tenants/routes.ts";
import { topicRoutes, topicV2Routes } from "./topics/routes.ts";
import { InboxRealtime, type RealtimeCluster, widgetRoutes } from "./widgets/routes.ts";
import { workerRegistry } from "./worker.ts";
import { workflowOverrideRoutes } from "./workflow-overrides/routes.ts";
import { bridgeRoutes, workflowRoutes, workflowV2Routes } from "./workflows/routes.ts";
import { workflowGroupReferences } from "./workflows/service.ts";

export { loggerOptions, logRedaction } from "./ops/logging.ts";

export interface AppOptions {
  store: Store;
  config?: Config;
  /** A pino logger, or false for none (tests). */
  logger?: FastifyBaseLogger | false;
  /**
   * How API keys are verified; default: a lookup in the store, remembered for key-guarded routes
   * (KEY_CACHE=off: a lookup on every request). See src/auth/key-verifier.ts.
   */
  keyLookup?: KeyLookup | KeyVerifier;
  /** Business time; default: the system clock. Tests pass a ManualClock and move it by hand. */
  clock?: Clock;
  /**
   * The job queue; default: one opened on the store, which the app stops when it closes. main.ts
   * passes its own (the worker role shares it) and stops it itself.
   */
  queue?: JobQueue;
  /** Whether this process runs the worker (default true; false for TIDINGS_ROLE=api). */
  runWorker?: boolean;
  /** The built dashboard served at /dashboard; default dist/dashboard (src/ops/dashboard.ts). */
  dashboardDir?: string;
  /**
   * The key that seals integration credentials; default: the config's (TIDINGS_SECRET_KEY). Without
   * one, the integration routes answer 503 and email and chat steps find no integration. main.ts
   * resolves it (see resolveSecretKey); tests pass one.
   */
  secretKey?: Buffer;
  /**
   * The integrations' key and SMTP pools; default: opened here with `secretKey` and closed when
   * the app closes. main.ts passes its own (the worker role shares them) and closes them itself.
   */
  integrations?: IntegrationTools;
  /**
   * The inbox's sockets and how changes reach them; default: made here (with the cluster adapter
   * of the store's backend) and closed when the app closes.
   */
  realtime?: InboxRealtime;
  /**
   * false: this process's inbox events stay in it (no cluster adapter), as for one process on its
   * own; tests that build the app in-process use it. Default: realtimeCluster(store, config).
   */
  realtimeCluster?: false;
  /** Told of every route as it is registered (a test walks the app's routes so). */
  onRoute?: (route: RouteOptions) => void;
}

/** How inbox events cross processes: Redis when REDIS_URL is set, else PostgreSQL; none on SQLite. */
export function realtimeCluster(store: Store, config: Config): RealtimeCluster | undefined {
  if (store.backend !== "postgres" || !store.postgres) return undefined;
  const schema = store.postgres.schema;
  if (config.redisUrl)
    return { kind: "redis", url: config.redisUrl, prefix: `tidings:${schema ?? "public"}` };
  return { kind: "postgres", url: store.postgres.url, schema };
}

/** The inbox's sockets for a process (main.ts makes the worker role's, which only publishes). */
export async function openRealtime(options: {
  store: Store;
  config: Config;
  clock: Clock;
  logger: pino.Logger;
  secretKey: Buffer | undefined;
  cluster?: false;
}): Promise<InboxRealtime> {
  const { store, config, clock } = options;
  const realtime = new InboxRealtime({
    deps: { db: store.db, clock },
    tokens: new SessionTokens({ secretKey: options.secretKey, ttlSeconds: config.widgetSessionTtlS, clock }),
    logger: options.logger,
    cluster: options.cluster === false ? undefined : realtimeCluster(store, config),
    socketsPerSubscriber: config.widgetSocketsPerSubscriber,
  });
  await realtime.connectCluster();
  return realtime;
}

const REQUEST_ID = /^[\w.:@-]{1,128}$/;

/**
 * Routes that load balancers and Prometheus call every few seconds: at info their lines would
 * outnumber everything else, so they complete at debug (what goes wrong in them is still logged:
 * an unreachable database warns, an error is an error).
 */
const PROBE_ROUTES = new Set(["/health", "/metrics"]);

/**
 * One log line per request, when it completes, naming the request and its outcome; Fastify's
 * "incoming request" line drops to debug. Logging two lines was a tenth of a request's CPU.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, "request errored");
    else if (PROBE_ROUTES.has(request.routeOptions.url ?? "")) reply.log.debug(fields, "request completed");
    else reply.log.info(fields, "request completed");
  }
}

/** The whole HTTP service as a Fastify instance that never listens: main.ts owns the process. */
export async function buildApp(options: AppOptions): Promise<App> {
  const config = options.config ?? loadConfig({});
  const { store } = options;
  const lookupKey = (hash: string) => findKeyOwner(store.db, hash);
  const keyLookup = options.keyLookup ?? (config.keyCache ? cachedKeys(lookupKey) : uncachedKeys(lookupKey));

  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    // Whole request received within REQUEST_TIMEOUT_MS; headers within half of it (slowloris).
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.max(100, Math.floor(config.requestTimeoutMs / 2)),
      // How often Node looks for requests past those limits (its default, 30 s, would let a slow
      // client hold a connection for up to twice as long as allowed).
      connectionsCheckingInterval: Math.max(50, Math.min(5000, Math.floor(config.requestTimeoutMs / 4))),
      requireHostHeader: false,
    },
    // A connection silent this long is closed; an idle keep-alive one after 72 s (longer than the
    // 60 s common to load balancers, so they close first and never reuse a closed connection).
    connectionTimeout: config.requestTimeoutMs + 5000,
    keepAliveTimeout: 72_000,
    // While draining, our own hook answers 503 in the one error body, with Retry-After.
    return503OnClosing: false,
    clientErrorHandler,
    // Paths Fastify cannot route (bad percent-encoding, over-long segments): the one error body too.
    frameworkErrors: handleFrameworkError,
    logController: new OneLinePerRequest(),
    requestIdHeader: false,
    genReqId: (req) => {
      const sent = req.headers["x-request-id"];
      return typeof sent === "string" && REQUEST_ID.test(sent) ? sent : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200, querystringParser: parseQueryString },
    ajv: { customOptions: { strict: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (options.onRoute) app.addHook("onRoute", options.onRoute);

  // JSON only: a body of any other type is a 415, not text for the schema to puzzle over.
  app.removeContentTypeParser(["text/plain"]);
  // Clients (curl scripts, hand-written Novu clients) send Content-Type: application/json on every
  // call, DELETE and GET included. An empty body is a 400 only where the route takes a body.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const schemaless = request.routeOptions.schema?.body === undefined;
    if (body === "" && schemaless) return done(null, undefined);
    parseJson(request, body as string, (error, parsed) => {
      // A route with a body schema checks nesting with it (http/validation.ts); a body sent where
      // none is read is held to the same depth, since the Idempotency-Key's hash still walks it.
      const tooDeep = error || !schemaless ? undefined : inspectBody(parsed);
      if (tooDeep?.problem === "depth")
        done(badRequest(`body must not nest objects and arrays more than ${MAX_BODY_DEPTH} levels deep`));
      else done(error ?? null, parsed);
    });
  });
  // A bodiless POST from axios (as @novu/node's environments.regenerateApiKeys sends it) carries
  // Content-Type: application/x-www-form-urlencoded and no bytes. An empty body of any type is no
  // body where the route takes none; anything else not JSON is still a 415.
  app.addContentTypeParser("*", { parseAs: "string" }, (request, body, done) => {
    if (body === "" && request.routeOptions.schema?.body === undefined) done(null, undefined);
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(String(request.headers["content-type"] ?? "")));
  });
  app.decorate("store", store);
  const clock = options.clock ?? systemClock;
  app.decorate("clock", clock);
  const ownQueue = options.queue === undefined;
  const queue =
    options.queue ??
    (await openQueue({
      store,
      clock,
      config,
      // Fastify's logger is the pino logger main.ts made; tests run without one.
      logger: (options.logger || pino({ enabled: false })) as pino.Logger,
    }).catch((error: unknown) => {
      // The database cannot be reached now (main.ts opens its queue itself and fails at start-up
      // then). The app still serves its 503s and /health; adding work gives the same error, which
      // the error handler answers as 503 with Retry-After.
      app.log.warn({ err: error }, "the job queue could not be opened: triggers are refused until restart");
      return unavailableQueue(error);
    }));
  app.decorate("queue", queue);
  app.decorate("quotas", config.quotas);
  const logger = (options.logger || pino({ enabled: false })) as pino.Logger;
  const secretKey = options.secretKey ?? config.secretKey;
  const ownRealtime = options.realtime === undefined;
  const realtime =
    options.realtime ??
    (await openRealtime({
      store,
      config,
      clock,
      logger,
      secretKey,
      ...(options.realtimeCluster === false ? { cluster: false as const } : {}),
    }));
  realtime.attach(app.server);
  app.decorate("inboxSockets", () => realtime.sockets);
  // Sockets would hold the HTTP server open: they go before it closes.
  app.addHook("preClose", async () => realtime.disconnectAll());
  const onInboxChange = (change: InboxChange) => realtime.publish(change);
  app.decorate("renderer", new Renderer(config.render));
  app.decorate("inAppListener", onInboxChange);
  const ownIntegrations = options.integrations === undefined;
  const integrations =
    options.integrations ??
    openIntegrationTools({
      secretKey,
      webhookTimeoutMs: config.webhookTimeoutMs,
      smtpTimeoutMs: config.smtpTimeoutMs,
      outboundAllow: config.outboundAllow,
    });
  app.decorate("secrets", integrations.box);
  // Calls to code-first workflow apps: the webhooks' outbound policy, the config's timeout and retries.
  const bridgeOptions = { ...config.bridge, outbound: integrations.outbound };
  // In this order: running deliveries finish before their SMTP pools close.
  app.addHook("onClose", async () => {
    if (ownQueue) await queue.stop();
    if (ownIntegrations) integrations.close();
    if (ownRealtime) await realtime.close();
  });
  if (options.runWorker ?? true) {
    const senders = channelSenders({ db: store.db, clock }, integrations);
    const { handlers, ...startOptions } = workerRegistry(
      {
        db: store.db,
        clock,
        secrets: integrations.box,
        queue,
        senders,
        render: config.render,
        bridge: bridgeOptions,
      },
      onInboxChange,
    );
    await queue.start(handlers, startOptions);
  }
  app.decorateRequest("tenant", undefined as never);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error as Error));
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(errorBody(404, `No route for ${request.method} ${pathOf(request)}`, pathOf(request))),
  );

  // Root hooks, in the order they run for every request (404s and /docs included).
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
  app.addHook("onRequest", requireHost);
  registerMetrics(app, store, config);
  registerLifecycle(app, config);
  await registerSecurity(app, config);
  await registerRateLimit(app, config);
  /** Counts the request (app.limitRate), then calls `done` with the 429 if it was refused. */
  const limitThen = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    let counted: void | Promise<void>;
    try {
      counted = app.limitRate(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (counted) counted.then(() => done(), done);
    else done();
  };
  // /v1 and /v2 requests are counted against their environment once the key is checked (below); the
  // rest, and those whose key is refused, against the client's address.
  app.addHook("onRequest", (request, reply, done) => {
    if (/^\/v[12]\//.test(request.routeOptions.url ?? "")) done();
    else limitThen(request, reply, done);
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Tidings API",
        version: "1.0.0",
        description:
          "Notification workflows, notification groups, subscribers, topics and environments, compatible with " +
          "Novu's v1 API, and the v2 routes over a subscriber's notifications that @novu/api 3 calls. Every " +
          "/v1 and /v2 route needs `Authorization: ApiKey <key>` but the inbox's (/v1/inbox, /v1/widgets), " +
          "which take a subscriber's session; errors share one body (see the Error schema).",
      },
      components: {
        securitySchemes: {
          ApiKey: { type: "apiKey", in: "header", name: "Authorization", description: "ApiKey <key>" },
          WidgetSession: {
            type: "http",
            scheme: "bearer",
            description: "The token of an inbox widget session (POST /v1/widgets/session/initialize)",
          },
          SubscriberSession: {
            type: "http",
            scheme: "bearer",
            description: "The token of a subscriber's inbox session (POST /v1/inbox/session)",
          },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", staticCSP: true, transformStaticCSP: docsCsp });

  registerHealth(app, store, config);
  registerIdempotencyKeyPurge(app, store.db);
  registerOpenJobsFolding(app, store);
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  await registerDashboard(app, config, options.dashboardDir);

  /** The API key's check on every route of a scope (/v1, /v2), and the rate limit of its environment. */
  const requireApiKey = (scope: App) => {
    scope.addHook("onRoute", (route) => {
      route.schema = { ...route.schema, security: [{ ApiKey: [] }] };
    });
    scope.addHook("onRequest", (request, reply, done) => {
      // A refused key still counts, against the address: guessing keys is rate limited too.
      const refuse = (error: unknown) =>
        limitThen(request, reply, (limited) => done(limited ?? (error as Error)));
      const admit = (tenant: Tenant) => {
        request.tenant = tenant;
        limitThen(request, reply, done);
      };
      let tenant: Tenant | Promise<Tenant>;
      try {
        tenant = authenticate(request, keyLookup);
      } catch (error) {
        refuse(error);
        return;
      }
      // A key this process remembers is answered without a promise (see authenticate).
      if (tenant instanceof Promise) tenant.then(admit, refuse);
      else admit(tenant);
    });
    scope.addHook("onSend", confirmRememberedKey);
  };
  await app.register(
    async (v1) => {
      requireApiKey(v1);
      await v1.register(workflowRoutes);
      await v1.register(bridgeRoutes, { tools: { bridge: bridgeOptions, sealer: integrations.box } });
      await v1.register(notificationGroupRoutes, { references: workflowGroupReferences });
      await v1.register(subscriberRoutes, {
        erasure: engineSubscriberErasure,
        outbound: integrations.outbound,
      });
      await v1.register(topicRoutes);
      await v1.register(tenantRoutes);
      await v1.register(layoutRoutes);
      await v1.register(feedRoutes);
      await v1.register(workflowOverrideRoutes);
      await v1.register(organizationRoutes, { sealer: integrations.box });
      await v1.register(environmentRoutes, { sealer: integrations.box });
      await v1.register(environmentV1Routes, {
        sealer: integrations.box,
        references: workflowGroupReferences,
      });
      await v1.register(eventRoutes);
      await v1.register(inboxRoutes, { onChange: onInboxChange });
      await v1.register(activityRoutes);
      await v1.register(integrationRoutes, { tools: integrations });
    },
    { prefix: "/v1" },
  );
  // Novu's v2 routes that @novu/api 3 calls where v1 has no equivalent.
  await app.register(
    async (v2) => {
      requireApiKey(v2);
      await v2.register(workflowV2Routes, { preview: (template, data) => previewStep(template, data) });
      await v2.register(environmentV2Routes, { references: workflowGroupReferences });
      await v2.register(subscriberV2Routes, {
        erasure: engineSubscriberErasure,
        outbound: integrations.outbound,
      });
      await v2.register(topicV2Routes);
      await v2.register(layoutV2Routes);
      await v2.register(subscriberNotificationRoutes, {
        onChange: onInboxChange,
        maxSnoozeDurationHours: config.inboxMaxSnoozeDurationHours,
      });
    },
    { prefix: "/v2" },
  );
  // Both session routes (the widget's and the current inbox's) draw from one bucket per environment.
  const perMinute = config.sessionNewSubscribersPerMinute;
  const sessionTools = {
    sealer: integrations.box,
    tokens: realtime.tokens,
    newSubscribers:
      perMinute > 0
        ? new LocalBuckets({ rate: perMinute / 60, burst: perMinute }, () => clock.now())
        : undefined,
  };
  await app.register(inboxSessionRoutes, {
    prefix: "/v1/inbox",
    tools: sessionTools,
    onChange: onInboxChange,
    maxSnoozeDurationHours: config.inboxMaxSnoozeDurationHours,
  });
  await app.register(widgetRoutes, {
    prefix: "/v1/widgets",
    tools: sessionTools,
    onChange: onInboxChange,
    onUsage: (name: string) => app.widgetUsage?.(name),
  });

  return app;
}

/** A queue that refuses work with the error that kept it from opening. */
function unavailableQueue(error: unknown): JobQueue {
  return {
    runAtFollowsClock: true,
    add: async () => {
      throw error;
    },
    wake: () => {},
    start: async () => {},
    stop: async () => {},
  };
}
