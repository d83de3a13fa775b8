import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { systemClock } from "./clock.ts";
import { loadConfig } from "./config.ts";
import { openQueue } from "./engine/queue/index.ts";
import { MissingSecretKeyError, resolveSecretKey, SecretBox } from "./integrations/service.ts";
import { createOrganization } from "./onboarding/service.ts";
import { createLogger } from "./ops/logging.ts";
import { openStore, SQLITE_FILE, type Store } from "./store/store.ts";
import * as tenancy from "./tenancy/service.ts";

const USAGE = `Usage: npm run cli -- <command> [options]

  init [--name <organization>] [--json]
      Create an organization with Development and Production environments, each with its
      General group and one API key; prints the keys (shown once). Creates the database
      when there is none yet.
  environments [--json]
      List environments and their ids.
  keys create --environment <environmentId> [--json]
      Issue a new API key for an environment (printed once).
  keys list [--environment <environmentId>] [--json]
      List keys: ids, environments and dates; never a key.
  keys revoke <keyId>
      Revoke a key; it is refused from the next request on.
  migrate
      Bring the database schema up to date (creating the database when there is none).
  serve
      Start the server (the same as npm start).
  sync --bridge-url <url> [--api-url <url>] [--secret-key <key>] [--json]
      Register a code-first workflow app's bridge with a running server and store the workflows
      it defines (POST /v1/bridge/sync, as \`npx novu sync\` does). --api-url defaults to
      TIDINGS_API_URL or http://localhost:$PORT (3000); --secret-key to NOVU_SECRET_KEY: the API
      key of the environment the workflows go to.

The database is the server's: DATABASE_URL (PostgreSQL) or DATA_DIR (SQLite, default ./data).
init and migrate create the database when there is none; the other commands refuse to.
Use "npm run -s cli -- ..." to get the JSON alone, without npm's header.`;

class UsageError extends Error {}

/**
 * The box that keeps new keys, encrypted, for the inbox widget's HMAC: the server's own secret key
 * (TIDINGS_SECRET_KEY, or DATA_DIR/secret.key on SQLite). Without one (PostgreSQL and no
 * TIDINGS_SECRET_KEY), keys are made all the same, but cannot check a widget session's HMAC.
 */
function keySealer(): SecretBox | undefined {
  const config = loadConfig();
  try {
    const { key } = resolveSecretKey({
      configured: config.secretKey,
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
    });
    return new SecretBox(key);
  } catch (error) {
    if (!(error instanceof MissingSecretKeyError)) throw error;
    process.stderr.write(
      "tidings: TIDINGS_SECRET_KEY is not set, so the new keys cannot check inbox widget HMACs\n",
    );
    return undefined;
  }
}

/**
 * The server's key, if this process can have it (TIDINGS_SECRET_KEY, or DATA_DIR/secret.key on
 * SQLite): a migration seals with it what an older version kept in the clear.
 */
function migrationSecrets(): SecretBox | undefined {
  const config = loadConfig();
  try {
    const { key } = resolveSecretKey({
      configured: config.secretKey,
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
    });
    return new SecretBox(key);
  } catch (error) {
    if (error instanceof MissingSecretKeyError) return undefined;
    throw error;
  }
}

/** The CLI acts now, by the system clock, on the store it opened. */
const depsOf = (store: Store) => ({ db: store.db, clock: systemClock });

function print(json: boolean, value: unknown, text: () => string) {
  process.stdout.write(`${json ? JSON.stringify(value, null, 2) : text()}\n`);
}

/** Refused: the command would work on a database that does not exist (a mistyped DATA_DIR, say). */
class NoDatabaseError extends Error {}

const CREATE_HINT = `Point DATA_DIR or DATABASE_URL at the server's database, or create a new one (with an
organization and its API keys) with: npm run cli -- init`;

/**
 * The store for one command. Only `create` commands (init, migrate) may bring a database into
 * being: any other, pointed at nothing, would otherwise make an empty database where the user
 * expected theirs and answer from it as if all were well.
 */
async function withStore<T>(
  fn: (store: Store) => Promise<T>,
  options: { create?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
  if (!config.databaseUrl && !options.create) {
    const file = path.join(config.dataDir, SQLITE_FILE);
    if (!fs.existsSync(file)) {
      const why = process.env.DATA_DIR ? "" : " (DATA_DIR is not set, so ./data is used)";
      throw new NoDatabaseError(`no database at ${file}${why}.\n${CREATE_HINT}`);
    }
  }
  // A short-lived command: no background checkpoints (SQLite checkpoints on its own schedule).
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    pgPoolSize: 2,
    sqliteBackgroundCheckpoints: false,
  });
  try {
    if (store.backend === "postgres" && !options.create) {
      // Tidings' tables, where the server makes them (the connection's search_path).
      const found = sql<{ table: string | null }>`select to_regclass('organizations')::text as table`;
      const { rows } = await found.execute(store.db);
      if (!rows[0]?.table)
        throw new NoDatabaseError(
          `the PostgreSQL database at DATABASE_URL has no Tidings tables.\n${CREATE_HINT}`,
        );
    }
    await store.migrate({ secrets: migrationSecrets() });
    return await fn(store);
  } finally {
    await store.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: "boolean", default: false },
      name: { type: "string" },
      environment: { type: "string" },
      "bridge-url": { type: "string" },
      "api-url": { type: "string" },
      "secret-key": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, sub, arg] = positionals;
  if (values.help || command === undefined || command === "help") {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined && !values.help ? 1 : 0;
  }
  const json = values.json ?? false;

  switch (command) {
    case "init":
      return withStore(
        async (store) => {
          const org = await createOrganization(depsOf(store), values.name ?? "My organization", keySealer());
          print(json, org, () =>
            [
              `Organization ${org.organizationId}`,
              ...org.environments.map((env) => `  ${env.name.padEnd(12)} ${env._id}  key: ${env.apiKey}`),
              "The keys are shown once; store them now.",
            ].join("\n"),
          );
          return 0;
        },
        { create: true },
      );
    case "environments":
      return withStore(async (store) => {
        const envs = await tenancy.listAllEnvironments(depsOf(store));
        print(json, envs, () =>
          envs.map((e) => `${e._id}  ${e.name.padEnd(12)} organization ${e._organizationId}`).join("\n"),
        );
        return 0;
      });
    case "migrate":
      return withStore(
        async (store) => {
          // The job queue's tables too (graphile-worker's schema on PostgreSQL; nothing more on SQLite).
          const config = loadConfig();
          await openQueue({ store, clock: systemClock, config, logger: createLogger("error") });
          process.stdout.write(`Schema up to date (${store.backend}).\n`);
          return 0;
        },
        { create: true },
      );
    case "serve":
      await import("./main.ts");
      return 0;
    case "keys":
      return keys(sub, arg, values.environment, json);
    case "sync":
      return syncBridge(values["bridge-url"], values["api-url"], values["secret-key"], json);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** Asks a running server to sync the bridge, as Novu's CLI does; prints the workflows it stored. */
async function syncBridge(
  bridgeUrl: string | undefined,
  apiUrl: string | undefined,
  secretKey: string | undefined,
  json: boolean,
): Promise<number> {
  if (!bridgeUrl) throw new UsageError("sync needs --bridge-url <url>");
  const key = secretKey ?? process.env.NOVU_SECRET_KEY;
  if (!key)
    throw new UsageError("sync needs --secret-key <key> (or NOVU_SECRET_KEY): the environment's API key");
  const base = apiUrl ?? process.env.TIDINGS_API_URL ?? `http://localhost:${process.env.PORT ?? "3000"}`;
  const response = await fetch(new URL("/v1/bridge/sync?source=cli", base), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `ApiKey ${key}` },
    body: JSON.stringify({ bridgeUrl }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    message?: string;
    data?: { triggers: { identifier: string }[]; steps: unknown[]; active: boolean }[];
  };
  if (response.status !== 201) {
    process.stderr.write(`tidings: sync failed (HTTP ${response.status}): ${body.message ?? "no answer"}\n`);
    return 1;
  }
  const workflows = body.data ?? [];
  print(json, workflows, () =>
    [
      `Synced ${workflows.length} workflow${workflows.length === 1 ? "" : "s"} from ${bridgeUrl}:`,
      ...workflows.map(
        (w) =>
          `  ${w.triggers[0]?.identifier ?? "?"}  ${w.steps.length} step(s)${w.active ? "" : "  (inactive)"}`,
      ),
    ].join("\n"),
  );
  return 0;
}

async function keys(
  sub: string | undefined,
  arg: string | undefined,
  environment: string | undefined,
  json: boolean,
) {
  switch (sub) {
    case "create": {
      if (!environment) throw new UsageError("keys create needs --environment <environmentId>");
      return withStore(async (store) => {
        const key = await tenancy.createApiKey(depsOf(store), environment, keySealer());
        if (!key) {
          process.stderr.write(`tidings: no environment ${environment}\n`);
          return 1;
        }
        print(
          json,
          key,
          () =>
            `Key ${key.id} for ${key.environment} (${key.environmentId}):\n  ${key.apiKey}\nShown once; store it now.`,
        );
        return 0;
      });
    }
    case "list":
      return withStore(async (store) => {
        const list = await tenancy.listApiKeys(depsOf(store), environment);
        print(json, list, () =>
          list
            .map(
              (k) =>
                `${k.id}  ${k.environment.padEnd(12)} ${k.environmentId}  created ${k.createdAt}${k.revokedAt ? `  revoked ${k.revokedAt}` : ""}`,
            )
            .join("\n"),
        );
        return 0;
      });
    case "revoke": {
      if (!arg) throw new UsageError("keys revoke needs a key id");
      return withStore(async (store) => {
        const revoked = await tenancy.revokeApiKey(depsOf(store), arg);
        if (!revoked) {
          process.stderr.write(`tidings: no live key ${arg}\n`);
          return 1;
        }
        print(json, { id: arg, revoked: true }, () => `Key ${arg} revoked.`);
        return 0;
      });
    }
    default:
      throw new UsageError(`unknown keys command "${sub ?? ""}": use create, list or revoke`);
  }
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    process.stderr.write(`tidings: ${(error as Error).message}\n\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`tidings: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
