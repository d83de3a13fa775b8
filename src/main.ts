import closeWithGrace from "close-with-grace";
import { buildApp } from "./app.ts";
import { firstRunBanner } from "./banner.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./ops/logging.ts";
import { openStore } from "./store/store.ts";
import { bootstrapOrganization } from "./tenancy/service.ts";

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
  const logger = createLogger(config.logLevel);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgPoolSize: config.pgPoolSize,
    pgStatementTimeoutMs: config.requestTimeoutMs,
    sqliteBackgroundCheckpoints: config.sqliteBackgroundCheckpoints,
    onBackgroundError: (err) => logger.warn({ err }, "database background work failed; carrying on"),
  });
  await store.migrate();
  logger.info(
    { backend: store.backend, ...(store.backend === "sqlite" ? { dataDir: config.dataDir } : {}) },
    "database ready",
  );

  const created = await bootstrapOrganization(store.db, store.backend);
  const app = await buildApp({ store, config, logger });

  // SIGTERM/SIGINT: /health turns 503 and new requests are refused (503, Retry-After), the listener
  // closes, requests in flight finish, then the database closes and the process exits 0. Past
  // SHUTDOWN_TIMEOUT_MS it exits 1 anyway; a second signal exits at once.
  closeWithGrace({ delay: config.shutdownTimeoutMs, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, "shutting down after an error");
    else logger.info({ signal }, "shutting down: finishing in-flight requests");
    app.startDraining();
    await app.close();
    logger.info("server closed; closing the database");
    await store.close();
    logger.info("stopped");
  });

  const address = await app.listen({ port: config.port, host: config.host });
  if (created) {
    const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
    const port = new URL(address).port;
    process.stdout.write(firstRunBanner(created, `http://${host}:${port}`));
  }
}

await main();
