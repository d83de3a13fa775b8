import net from "node:net";
import { buildApp } from "../src/app.ts";
import { type Config, loadConfig } from "../src/config.ts";
import type { App } from "../src/http/types.ts";
import { createLogger } from "../src/ops/logging.ts";
import type { Store } from "../src/store/store.ts";
import { TEST_SECRET_KEY } from "./harness.ts";

/** An app over `store` with the environment variables `env` (as the process would read them). */
export async function appWith(
  store: Store,
  env: Record<string, string> = {},
  logLines?: string[],
): Promise<{ app: App; config: Config }> {
  const config = loadConfig(env);
  const logger = logLines ? createLogger("info", { write: (line: string) => logLines.push(line) }) : false;
  const app = await buildApp({ store, config, logger, secretKey: TEST_SECRET_KEY, realtimeCluster: false });
  await app.ready();
  return { app, config };
}

/** A loopback port nothing listens on (bound, read, released). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
