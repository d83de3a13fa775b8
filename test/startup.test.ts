import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { SERVICE_NODE_FLAGS } from "../scripts/service-node-flags.ts";
import { openStore } from "../src/store/store.ts";
import {
  forEachProcessBackend,
  type ProcessDatabase,
  runTs,
  type ServerProcess,
  startTs,
  stopServer,
  waitFor,
} from "./processes.ts";

// `npm start` as a new user meets it (README "Quick start"): the first start on an empty database
// prints the two keys once, the server answers, SIGTERM stops it cleanly; a restart prints no keys.

const BANNER_HEADING = "Tidings created your organization. These API keys are shown once; store them now.";

/** The keys the banner lists, by environment name. */
function bannerKeys(stdout: string): Map<string, string> {
  const keys = new Map<string, string>();
  for (const match of stdout.matchAll(/^ {2}(Development|Production) +(tid_sk_[A-Za-z0-9_-]+)$/gm)) {
    keys.set(match[1] as string, match[2] as string);
  }
  return keys;
}

const count = (text: string, part: string) => text.split(part).length - 1;

/** The JSON log lines among what the process printed. */
function logLines(stdout: string): string[] {
  return stdout.split("\n").filter((line) => line.startsWith("{"));
}

forEachProcessBackend("startup", (suite) => {
  let database: ProcessDatabase | undefined;
  let keys = new Map<string, string>();
  const start = (db: ProcessDatabase) => suite.start({ ...db.env, SHUTDOWN_TIMEOUT_MS: "10000" });
  const stop = (server: ServerProcess) => stopServer(server);

  test("the first start prints the banner with both keys once; the keys work; SIGTERM exits 0", async () => {
    database = await suite.database();
    const server = await start(database);
    // The banner is written right after the server starts listening.
    await waitFor(server, () => server.stdout().includes("More keys:"), "the banner");
    const stdout = server.stdout();
    assert.equal(count(stdout, BANNER_HEADING), 1, stdout);
    keys = bannerKeys(stdout);
    assert.deepEqual([...keys.keys()], ["Development", "Production"], stdout);
    const dev = keys.get("Development") as string;
    const prod = keys.get("Production") as string;
    assert.notEqual(dev, prod);
    // Listed once each; the Development key also appears in the curl line to try.
    assert.equal(count(stdout, prod), 1);
    assert.equal(count(stdout, dev), 2);
    assert.match(
      stdout,
      new RegExp(`curl -s ${server.url}/v1/notification-groups -H "Authorization: ApiKey ${dev}"`),
    );

    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const environments = new Set<string>();
    for (const key of [dev, prod]) {
      const res = await fetch(`${server.url}/v1/notification-groups`, {
        headers: { authorization: `ApiKey ${key}` },
      });
      assert.equal(res.status, 200);
      const { data } = (await res.json()) as { data: { name: string; _environmentId: string }[] };
      assert.deepEqual(
        data.map((g) => g.name),
        ["General"],
      );
      environments.add(data[0]?._environmentId ?? "");
    }
    assert.equal(environments.size, 2, "each key reaches its own environment");
    const refused = await fetch(`${server.url}/v1/notification-groups`, {
      headers: { authorization: `ApiKey ${dev}x` },
    });
    assert.equal(refused.status, 401);

    const finished = await stop(server);
    assert.equal(finished.code, 0, finished.stderr);
    assert.equal(finished.signal, null);
    // The keys never reach a log line, though requests carried them.
    const lines = logLines(finished.stdout);
    assert.ok(
      lines.some((line) => line.includes("/v1/notification-groups")),
      "the requests were logged (so this check can fail)",
    );
    for (const line of lines) {
      assert.ok(!line.includes(dev) && !line.includes(prod), `a key in a log line: ${line}`);
      assert.ok(!/ApiKey\s/.test(line), `an Authorization header in a log line: ${line}`);
    }
    assert.equal(count(finished.stdout, BANNER_HEADING), 1, "printed once, and not again on the way out");
  });

  test("a second start prints no keys; the first keys still work; a key revoked by the CLI is refused at once", async () => {
    assert.ok(database && keys.size === 2, "runs after the first start");
    const server = await start(database);
    const dev = keys.get("Development") as string;
    const prod = keys.get("Production") as string;
    const call = (key: string, method: string, path: string, body?: object) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `ApiKey ${key}`,
          ...(body ? { "content-type": "application/json" } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const groups = await call(dev, "GET", "/v1/notification-groups");
    assert.equal(groups.status, 200);
    const { data } = (await groups.json()) as { data: { _id: string; _environmentId: string }[] };
    const created = await call(dev, "POST", "/v1/workflows", {
      name: "Restarted",
      notificationGroupId: data[0]?._id,
      steps: [{ template: { type: "in_app", content: "Hi" } }],
    });
    assert.equal(created.status, 201);
    const workflowId = ((await created.json()) as { data: { _id: string } }).data._id;
    assert.equal(
      (await call(dev, "PUT", `/v1/workflows/${workflowId}/status`, { active: true })).status,
      200,
    );

    // Revoke the Development key from another process, as an operator would.
    const store = await openStore(database.storeOptions);
    let keyId: string;
    try {
      keyId = (
        await store.db
          .selectFrom("api_keys")
          .select("id")
          .where("environment_id", "=", data[0]?._environmentId ?? "")
          .executeTakeFirstOrThrow()
      ).id;
    } finally {
      await store.close();
    }
    const revoked = await runTs("src/cli.ts", ["keys", "revoke", keyId], database.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const res of [
      await call(dev, "PUT", `/v1/workflows/${workflowId}/status`, { active: false }),
      await call(dev, "GET", "/v1/notification-groups"),
    ]) {
      assert.equal(res.status, 401);
    }
    assert.equal((await call(prod, "GET", "/v1/notification-groups")).status, 200);

    const finished = await stop(server);
    assert.equal(finished.code, 0, finished.stderr);
    assert.ok(!finished.stdout.includes(BANNER_HEADING), finished.stdout);
    assert.doesNotMatch(finished.stdout + finished.stderr, /tid_sk_/);
  });

  test("a first start whose port is taken says so, exits 1 and creates nothing; the next start prints keys that work", async () => {
    const db = await suite.database();
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    let failed: Awaited<ReturnType<typeof runTs>>;
    try {
      failed = await startTs(
        "src/main.ts",
        [],
        { ...db.env, HOST: "127.0.0.1", PORT: String(port) },
        SERVICE_NODE_FLAGS,
      ).exited;
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(
      failed.stderr,
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: port ${port} is in use`),
    );
    assert.match(
      failed.stderr,
      /no organization was created yet; the first start that listens creates it and prints its API keys/,
    );
    assert.doesNotMatch(failed.stderr, /^\s+at /m, "no stack trace");
    assert.doesNotMatch(failed.stdout + failed.stderr, /tid_sk_/);
    assert.ok(!failed.stdout.includes(BANNER_HEADING), failed.stdout);
    const store = await openStore(db.storeOptions);
    try {
      const organizations = await store.db.selectFrom("organizations").select("id").execute();
      assert.deepEqual(organizations, [], "no organization whose keys nobody saw");
    } finally {
      await store.close();
    }

    const server = await start(db);
    await waitFor(server, () => server.stdout().includes("More keys:"), "the banner");
    const printed = bannerKeys(server.stdout());
    assert.deepEqual([...printed.keys()], ["Development", "Production"], server.stdout());
    assert.match(server.stdout(), /More keys: npm run cli -- keys create --environment <environmentId>/);
    for (const key of printed.values()) {
      const res = await fetch(`${server.url}/v1/notification-groups`, {
        headers: { authorization: `ApiKey ${key}` },
      });
      assert.equal(res.status, 200);
    }
    const finished = await stop(server);
    assert.equal(finished.code, 0, finished.stderr);
  });

  // Two processes on one database: PostgreSQL only, where scaling out is supported (SQLite is one
  // process's database).
  if (suite.backend === "postgres")
    test("two servers starting at once on one empty PostgreSQL database: one organization, one banner", async () => {
      const db = await suite.database();
      const servers = await Promise.all([start(db), start(db)]);
      const finished = await Promise.all(servers.map(stop));
      for (const f of finished) assert.equal(f.code, 0, f.stderr);
      const banners = finished.map((f) => count(f.stdout, BANNER_HEADING));
      assert.deepEqual([...banners].sort(), [0, 1], `banners printed: ${banners.join(", ")}`);
    });
});
