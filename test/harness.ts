import { after, before } from "node:test";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import postgres from "postgres";
import { type AppOptions, buildApp } from "../src/app.ts";
import { type Clock, systemClock } from "../src/clock.ts";
import { type Config, loadConfig } from "../src/config.ts";
import type { App } from "../src/http/types.ts";
import { listGroups } from "../src/notification-groups/repository.ts";
import { createOrganization } from "../src/onboarding/service.ts";
import { SecretBox } from "../src/store/secret-box.ts";
import type { Store } from "../src/store/store.ts";
import { type Backend, type BackendName, describeEachBackend, orDestroy } from "./backends.ts";

/**
 * The key every test app seals integration credentials with (as TIDINGS_SECRET_KEY would give it):
 * fixed, so a second app over the same database opens what the first sealed.
 */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7);

/**
 * The loopback network, which test apps may reach on a caller's behalf: the SMTP and webhook
 * sinks tests deliver to listen on 127.0.0.1, which the outbound policy refuses by default.
 */
export const TEST_OUTBOUND_ALLOW = "127.0.0.1/32";

/** A test app's configuration: `env` as the process would read it, with the sinks' loopback allowed. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ TIDINGS_OUTBOUND_ALLOW: TEST_OUTBOUND_ALLOW, ...env });
}

export interface EnvironmentKeys {
  environmentId: string;
  apiKey: string;
  /** The id of the environment's `General` group. */
  generalGroupId: string;
}

export interface TestTenant {
  organizationId: string;
  dev: EnvironmentKeys;
  prod: EnvironmentKeys;
}

export interface TestContext<C extends Clock = Clock> {
  readonly backend: BackendName;
  readonly app: App;
  readonly store: Store;
  /** The app's clock: the system clock, or the one `options.clock` made (a ManualClock to move). */
  readonly clock: C;
  /**
   * A second connection to the suite's database, standing for another process (the CLI, a second
   * API process); closed when the suite ends.
   */
  connect(): Promise<Store>;
  /** A new organization (Development and Production, each with its key and General group). */
  tenant(): Promise<TestTenant>;
  /** A client that sends `Authorization: ApiKey <key>` on every request. */
  client(apiKey: string): Client;
}

export type Body = Record<string, unknown> | unknown[] | string | null;

export interface Client {
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body?: Body, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  put(url: string, body?: Body, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  patch(url: string, body?: Body, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  delete(url: string): Promise<LightMyRequestResponse>;
}

/**
 * How long a test request may go unanswered before it fails, naming itself: a safety net, so that a
 * request that never answers fails its test with what was in flight (and, on PostgreSQL, what each
 * of the database's sessions was doing) rather than holding the whole file until the runner's limit.
 */
export const ANSWER_LIMIT_MS = Number(process.env.TEST_ANSWER_LIMIT_MS ?? 120_000);

function answered(app: App, store: Store, options: InjectOptions): Promise<LightMyRequestResponse> {
  const answer = app.inject(options);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void sessionsOf(store).then((sessions) =>
        reject(
          new Error(
            `${options.method ?? "GET"} ${String(options.url)} did not answer within ${ANSWER_LIMIT_MS} ms${sessions}`,
          ),
        ),
      );
    }, ANSWER_LIMIT_MS);
    timer.unref();
  });
  return Promise.race([answer, limit]).finally(() => clearTimeout(timer));
}

/** What each of the PostgreSQL database's sessions is doing, for a request that never answered. */
async function sessionsOf(store: Store): Promise<string> {
  if (store.backend !== "postgres" || !store.postgres) return "";
  const admin = postgres(store.postgres.url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    const rows = await admin`
      select pid, state, wait_event_type, wait_event, now() - xact_start as in_transaction,
             left(query, 200) as query
      from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    return `\nthe database's sessions:\n${rows.map((r) => JSON.stringify(r)).join("\n")}`;
  } catch (error) {
    return `\n(the database's sessions could not be read: ${String(error)})`;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

function client(app: App, store: Store, apiKey: string | undefined): Client {
  const send = (
    method: InjectOptions["method"],
    url: string,
    body?: Body,
    headers: Record<string, string> = {},
  ) => {
    const all: Record<string, string> = { ...headers };
    if (apiKey !== undefined) all.authorization = `ApiKey ${apiKey}`;
    const options: InjectOptions = { method, url, headers: all };
    if (body !== undefined) {
      options.payload = typeof body === "string" ? body : JSON.stringify(body);
      all["content-type"] ??= "application/json";
    }
    return answered(app, store, options);
  };
  return {
    request: (options) =>
      answered(app, store, {
        ...options,
        headers: { ...(apiKey ? { authorization: `ApiKey ${apiKey}` } : {}), ...options.headers },
      }),
    get: (url) => send("GET", url),
    post: (url, body, headers) => send("POST", url, body, headers),
    put: (url, body, headers) => send("PUT", url, body, headers),
    patch: (url, body, headers) => send("PATCH", url, body, headers),
    delete: (url) => send("DELETE", url),
  };
}

async function newTenant(store: Store): Promise<TestTenant> {
  // Keys sealed as the app seals them, so the inbox widget's HMAC can be checked against them.
  const org = await createOrganization(
    { db: store.db, clock: systemClock },
    "Test organization",
    new SecretBox(TEST_SECRET_KEY),
  );
  const keysOf = async (name: string): Promise<EnvironmentKeys> => {
    const env = org.environments.find((e) => e.name === name);
    if (!env) throw new Error(`no ${name} environment`);
    const groups = await listGroups(store.db, env._id);
    const general = groups.find((g) => g.name === "General");
    if (!general) throw new Error(`no General group in ${name}`);
    return { environmentId: env._id, apiKey: env.apiKey, generalGroupId: general.id };
  };
  return {
    organizationId: org.organizationId,
    dev: await keysOf("Development"),
    prod: await keysOf("Production"),
  };
}

export interface BackendOptions<C extends Clock> {
  /** Makes the app's clock, once per backend: `() => new ManualClock()` lets the tests move time. */
  clock?: () => C;
  /** More buildApp options (a keyLookup, a config), given the backend's store; the config defaults to testConfig(). */
  app?: (store: Store) => Omit<AppOptions, "store" | "clock">;
  /**
   * How many of a backend's tests may run at once (1 by default): only where every test works on
   * data of its own or only reads what others share; their waits on the database then overlap.
   */
  concurrency?: number;
}

type LiveContext<C extends Clock> = Omit<TestContext<C>, "backend"> & { destroy(): Promise<void> };

async function contextFor<C extends Clock>(
  backend: Backend,
  options: BackendOptions<C>,
): Promise<LiveContext<C>> {
  const { store, connect, destroy } = await backend.open();
  // Without options.clock the type parameter is the default, Clock, which the system clock is.
  const clock = options.clock ? options.clock() : (systemClock as C);
  const others: Store[] = [];
  const destroyAll = async () => {
    for (const other of others) await other.close();
    await destroy();
  };
  const app = await orDestroy(destroyAll, async () => {
    // One process: its inbox events need no cluster adapter (test/widget-processes.test.ts runs
    // several), which would hold a PostgreSQL connection per app the suite builds.
    const built = await buildApp({
      secretKey: TEST_SECRET_KEY,
      realtimeCluster: false,
      config: testConfig(),
      ...options.app?.(store),
      store,
      clock,
    });
    await built.ready();
    return built;
  });
  return {
    app,
    store,
    clock,
    tenant: () => newTenant(store),
    client: (apiKey) => client(app, store, apiKey),
    async connect() {
      const other = await connect();
      others.push(other);
      return other;
    },
    async destroy() {
      await app.close();
      await destroyAll();
    },
  };
}

/** A client that sends no Authorization header at all. */
export const anonymous = (ctx: TestContext): Client => client(ctx.app, ctx.store, undefined);

/**
 * Declares the suite once per backend (SQLite always, PostgreSQL when available), each with a fresh
 * database and app. `define` runs at declaration time and registers tests (and hooks of its own,
 * which run before the context is thrown away); the context's members are usable inside them.
 */
export function forEachBackend<C extends Clock = Clock>(
  name: string,
  define: (ctx: TestContext<C>) => void,
  options: BackendOptions<C> = {},
): void {
  describeEachBackend(
    name,
    (backend) => {
      let current: LiveContext<C> | undefined;
      function live() {
        if (!current) throw new Error("the test context is used outside a test");
        return current;
      }
      const ctx: TestContext<C> = {
        backend: backend.name,
        get app() {
          return live().app;
        },
        get store() {
          return live().store;
        },
        get clock() {
          return live().clock;
        },
        tenant: () => live().tenant(),
        client: (apiKey) => live().client(apiKey),
        connect: () => live().connect(),
      };
      before(async () => {
        current = await contextFor(backend, options);
      });
      define(ctx);
      // Registered after define's own hooks, so that what they made (apps over ctx.store) is closed first.
      after(async () => {
        await current?.destroy();
      });
    },
    undefined,
    { concurrency: options.concurrency },
  );
}
