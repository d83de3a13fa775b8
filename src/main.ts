import closeWithGrace from "close-with-grace";
import { buildApp, openRealtime } from "./app.ts";
import { firstRunBanner } from "./banner.ts";
import { systemClock } from "./clock.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openQueue } from "./engine/queue/index.ts";
import {
  channelSenders,
  MissingSecretKeyError,
  openIntegrationTools,
  resolveSecretKey,
} from "./integrations/service.ts";
import { bootstrapOrganization, hasNoOrganization } from "./onboarding/service.ts";
import { createLogger, stdoutLog } from "./ops/logging.ts";
import { openStore } from "./store/store.ts";
import { workerRegistry } from "./worker.ts";

/** The process: configuration, store, migrations, first-run keys, the server, and a clean exit. */
export async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tidings: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // The banner below goes through the logger's stdout, after the lines logged before it.
  const stdout = stdoutLog();
  const logger = createLogger(config.logLevel, stdout);
  // Before the database: a scale-out process without the shared key must not start at all.
  let secret: ReturnType<typeof resolveSecretKey>;
  try {
    secret = resolveSecretKey({
      configured: config.secretKey,
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
    });
  } catch (error) {
    if (error instanceof MissingSecretKeyError || error instanceof ConfigError) {
      process.stderr.write(`tidings: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (secret.source === "generated") {
    logger.warn(
      { dataDir: config.dataDir },
      "generated the key that encrypts integration credentials (secret.key in DATA_DIR): back it up with the database",
    );
  }
  const integrations = openIntegrationTools({
    secretKey: secret.key,
    webhookTimeoutMs: config.webhookTimeoutMs,
    smtpTimeoutMs: config.smtpTimeoutMs,
    outboundAllow: config.outboundAllow,
  });
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgPoolSize: config.pgPoolSize,
    pgStatementTimeoutMs: config.requestTimeoutMs,
    sqliteBackgroundCheckpoints: config.sqliteBackgroundCheckpoints,
    sqliteSync: config.sqliteSync,
    onBackgroundError: (err) => logger.warn({ err }, "database background work failed; carrying on"),
  });
  // The key seals, on the way, secrets an older version kept in the clear.
  await store.migrate({ secrets: integrations.box });
  // A pool that cannot be opened whole now still serves what it can: the service starts.
  await store
    .warm()
    .catch((err: unknown) => logger.warn({ err }, "database: could not open the whole pool at start"));
  logger.info(
    { backend: store.backend, ...(store.backend === "sqlite" ? { dataDir: config.dataDir } : {}) },
    "database ready",
  );

  const clock = systemClock;
  const queue = await openQueue({ store, clock, config, logger });
  if (config.role === "worker") {
    const senders = channelSenders({ db: store.db, clock }, integrations);
    // No sockets here: new messages are announced to the API processes that hold them.
    const realtime = await openRealtime({ store, config, clock, logger, secretKey: secret.key });
    const { handlers, ...options } = workerRegistry(
      { db: store.db, clock, secrets: integrations.box, queue, senders, render: config.render },
      (change) => realtime.publish(change),
    );
    await queue.start(handlers, options);
    // No listener: keep the process alive until a signal stops the worker.
    const keepAlive = setInterval(() => {}, 1 << 30);
    closeWithGrace({ delay: config.shutdownTimeoutMs, logger }, async ({ signal, err }) => {
      if (err) logger.error({ err }, "shutting down after an error");
      else logger.info({ signal }, "shutting down: finishing running tasks");
      clearInterval(keepAlive);
      await queue.stop();
      await realtime.close();
      integrations.close();
      await store.close();
      logger.info("stopped");
    });
    logger.info({ concurrency: config.workerConcurrency }, "worker running");
    return;
  }

  // The app runs the worker in this process unless TIDINGS_ROLE=api (and stops it when it closes).
  const app = await buildApp({
    store,
    config,
    logger,
    clock,
    queue,
    integrations,
    runWorker: config.role !== "api",
  });

  const stop = async () => {
    app.startDraining();
    // Requests in flight and running tasks finish side by side; the database closes after both.
    await Promise.all([app.close(), queue.stop()]);
    integrations.close();
    logger.info("server and worker closed; closing the database");
    await store.close();
    logger.info("stopped");
  };
  // SIGTERM/SIGINT: /health turns 503 and new requests are refused (503, Retry-After), the listener
  // closes, requests in flight finish, then the database closes and the process exits 0. Past
  // SHUTDOWN_TIMEOUT_MS it exits 1 anyway; a second signal exits at once.
  const closing = closeWithGrace({ delay: config.shutdownTimeoutMs, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, "shutting down after an error");
    else logger.info({ signal }, "shutting down: finishing in-flight requests");
    await stop();
  });

  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Said plainly, not as a stack trace; and before anything is created, so that a first start
    // that cannot listen leaves no organization whose keys nobody saw.
    const firstRun = await hasNoOrganization({ db: store.db, clock }).catch(() => false);
    logger.error(
      { code: (error as NodeJS.ErrnoException).code, host: config.host, port: config.port },
      "could not listen",
    );
    process.stderr.write(listenFailure(error, config, firstRun));
    closing.uninstall();
    await stop();
    process.exit(1);
  }
  // Only now, listening: the keys are printed by the start that creates them.
  const created = await bootstrapOrganization({ db: store.db, clock }, store.backend, integrations.box);
  if (created) {
    const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
    const port = new URL(address).port;
    stdout.write(firstRunBanner(created, `http://${host}:${port}`));
  }
}

/** Why the server could not listen, and what to do; on a first start, that no keys were made yet. */
function listenFailure(error: unknown, config: { host: string; port: number }, firstRun: boolean): string {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${config.host}:${config.port}`;
  const reason =
    code === "EADDRINUSE"
      ? `port ${config.port} is in use: stop what listens there, or set PORT to another port`
      : code === "EACCES"
        ? `no permission to listen on port ${config.port}: set PORT to one above 1023`
        : code === "EADDRNOTAVAIL"
          ? `${config.host} is not an address of this machine: check HOST`
          : (error as Error).message;
  const lines = [`tidings: cannot listen on ${where}: ${reason}`];
  if (firstRun)
    lines.push(
      "tidings: no organization was created yet; the first start that listens creates it and prints its API keys",
    );
  return `${lines.join("\n")}\n`;
}

await main();
