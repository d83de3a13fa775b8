import { after, before, describe, test } from "node:test";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { buildApp } from "../src/app.ts";
import type { App } from "../src/http/types.ts";
import { listGroups } from "../src/notification-groups/repository.ts";
import type { Store } from "../src/store/store.ts";
import { createOrganization } from "../src/tenancy/service.ts";
import { type Backend, type BackendName, backends, orDestroy, postgresSkipped } from "./backends.ts";

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

export interface TestContext {
  readonly backend: BackendName;
  readonly app: App;
  readonly store: Store;
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

function client(app: App, apiKey: string | undefined): Client {
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
    return app.inject(options);
  };
  return {
    request: (options) =>
      app.inject({
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
  const org = await createOrganization(store.db, "Test organization");
  const keysOf = async (name: string): Promise<EnvironmentKeys> => {
    const env = org.environments.find((e) => e.name === name);
    if (!env) throw new Error(`no ${name} environment`);
    const groups = await listGroups(store.db, env._id);
    const general = groups.find((g) => g.name === "General");
    if (!general) throw new Error(`no General group in ${name}`);
    return { environmentId: env._id, apiKey: env.apiKey, generalGroupId: general._id };
  };
  return {
    organizationId: org.organizationId,
    dev: await keysOf("Development"),
    prod: await keysOf("Production"),
  };
}

async function contextFor(backend: Backend): Promise<TestContext & { destroy(): Promise<void> }> {
  const { store, destroy } = await backend.open();
  const app = await orDestroy(destroy, async () => {
    const built = await buildApp({ store });
    await built.ready();
    return built;
  });
  return {
    backend: backend.name,
    app,
    store,
    tenant: () => newTenant(store),
    client: (apiKey) => client(app, apiKey),
    async destroy() {
      await app.close();
      await destroy();
    },
  };
}

/** A client that sends no Authorization header at all. */
export const anonymous = (ctx: TestContext): Client => client(ctx.app, undefined);

/**
 * Declares the suite once per backend (SQLite always, PostgreSQL when available). `define` runs at
 * declaration time and registers tests; the context's members are usable inside the tests.
 */
export function forEachBackend(name: string, define: (ctx: TestContext) => void): void {
  for (const backend of backends) {
    describe(`${name} [${backend.name}]`, () => {
      let current: (TestContext & { destroy(): Promise<void> }) | undefined;
      const ctx: TestContext = {
        backend: backend.name,
        get app() {
          return live().app;
        },
        get store() {
          return live().store;
        },
        tenant: () => live().tenant(),
        client: (apiKey) => live().client(apiKey),
      };
      function live() {
        if (!current) throw new Error("the test context is used outside a test");
        return current;
      }
      before(async () => {
        current = await contextFor(backend);
      });
      after(async () => {
        await current?.destroy();
      });
      define(ctx);
    });
  }
  if (postgresSkipped) {
    describe(`${name} [postgres]`, () => {
      test("PostgreSQL half", { skip: postgresSkipped }, () => {});
    });
    process.emitWarning(postgresSkipped);
  }
}
