import { STATUS_CODES } from "node:http";
import net from "node:net";
import { buildApp } from "../src/app.ts";
import { type Config, loadConfig } from "../src/config.ts";
import type { App } from "../src/http/types.ts";
import { createLogger } from "../src/ops/logging.ts";
import type { Store } from "../src/store/store.ts";
import { createOrganization } from "../src/tenancy/service.ts";

const ERROR_KEYS = new Set(["statusCode", "error", "message", "path", "timestamp", "errors", "errorId"]);
// What must never reach a client: stack frames, SQL, driver and framework internals.
const INTERNALS =
  /\bat [\w.<>]+ \(|node:internal|\/node_modules\/|\.ts:\d+|SQLITE_|sqlite|postgres|\bselect\s.+\sfrom\b|\binsert into\b|\bupdate\s+\w+\s+set\b|syntax error at or near|FST_ERR|ajv/i;

/**
 * The contract's one error body (part 4), checked without assertions so a fuzzer can count
 * problems: undefined when the body is right, else what is wrong.
 */
export function errorShapeProblem(status: number, contentType: unknown, text: string): string | undefined {
  if (!/^application\/json/.test(String(contentType ?? ""))) return `content-type ${String(contentType)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return "body is not JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body is not an object";
  for (const key of Object.keys(body)) if (!ERROR_KEYS.has(key)) return `unexpected key ${key}`;
  if (body.statusCode !== status) return `statusCode ${String(body.statusCode)} != ${status}`;
  if (body.error !== STATUS_CODES[status]) return `error ${String(body.error)}`;
  if (typeof body.message !== "string" || body.message === "") return "message missing";
  if (typeof body.path !== "string") return "path missing";
  if (typeof body.timestamp !== "string" || Number.isNaN(Date.parse(body.timestamp))) return "timestamp";
  if (status >= 500 && typeof body.errorId !== "string") return "5xx without errorId";
  if (body.errors !== undefined) {
    if (!Array.isArray(body.errors)) return "errors is not an array";
    for (const e of body.errors as { field?: unknown; message?: unknown }[]) {
      if (typeof e?.field !== "string" || typeof e?.message !== "string") return "errors item shape";
    }
  }
  if (INTERNALS.test(body.message as string)) return `internals in message: ${body.message}`;
  return undefined;
}

/** True when the text leaks a stack trace or SQL (any response, error or not). */
export const leaksInternals = (text: string) =>
  /\bat [\w.<>]+ \(|node:internal|SQLITE_|syntax error at or near/.test(text);

/** An app over `store` with the environment variables `env` (as the process would read them). */
export async function appWith(
  store: Store,
  env: Record<string, string> = {},
  logLines?: string[],
): Promise<{ app: App; config: Config }> {
  const config = loadConfig(env);
  const logger = logLines ? createLogger("info", { write: (line: string) => logLines.push(line) }) : false;
  const app = await buildApp({ store, config, logger });
  await app.ready();
  return { app, config };
}

/** A new organization; its Development and Production keys and ids. */
export async function orgKeys(store: Store) {
  const org = await createOrganization(store.db, "Ops test");
  const [dev, prod] = org.environments;
  if (!dev || !prod) throw new Error("organization without its environments");
  return { organizationId: org.organizationId, dev, prod };
}

/** A loopback port nothing listens on (bound, read, released). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `check` every 50 ms until it is true or `ms` pass; returns its last answer. */
export async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
