import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { sql } from "kysely";
import { buildApp } from "../src/app.ts";
import type { App } from "../src/http/types.ts";
import { openStore, type Store } from "../src/store/store.ts";
import { assertErrorBody } from "./error-body.ts";
import { API_KEY, OBJECT_ID } from "./patterns.ts";
import { type Finished, forEachProcessBackend, type ProcessDatabase, runTs } from "./processes.ts";

// The CLI as a user runs it (README: "Keys and organizations: the CLI"), on the database the
// server uses; what it prints is checked, and the keys it issues are tried against the real app.

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

interface InitOutput {
  organizationId: string;
  environments: { name: string; _id: string; apiKey: string }[];
}

const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The CLI run from another working folder (runTs runs from the repository's), as a user may. */
const cliIn = (cwd: string, env: Record<string, string>, args: string[]): Promise<Finished> =>
  runTs("src/cli.ts", args, env, cwd);

forEachProcessBackend("cli", (suite) => {
  // The cases that do not depend on the database (text output, refusals) run on SQLite only, to
  // keep the number of processes started down.
  const full = suite.backend === "sqlite";
  let database: ProcessDatabase;
  let store: Store;
  let app: App;
  let org: InitOutput;
  const cli = (...args: string[]) => runTs("src/cli.ts", args, database.env);

  before(async () => {
    database = await suite.database();
  });
  after(async () => {
    await app?.close();
    await store?.close();
  });

  async function status(apiKey: string) {
    const res = await app.inject({
      method: "GET",
      url: "/v1/notification-groups",
      headers: { authorization: `ApiKey ${apiKey}` },
    });
    return res;
  }

  // What works on the server's database must not, pointed at nothing, make an empty database and
  // answer from it: a mistyped DATA_DIR would look like a database with no keys.
  test("on a database that does not exist yet, every command but init and migrate refuses and creates nothing", async () => {
    const commands = [
      ["environments"],
      ["keys", "list", "--json"],
      ["keys", "create", "--environment", "000000000000000000000000"],
      ["keys", "revoke", "000000000000000000000000"],
    ];
    const runs = full
      ? await Promise.all(commands.map((args) => cli(...args)))
      : [await cli(...(commands[0] as string[]))];
    runs.forEach((run, i) => {
      const label = commands[i]?.join(" ");
      assert.equal(run.code, 1, `${label}: ${run.stderr}`);
      assert.match(
        run.stderr,
        suite.backend === "sqlite"
          ? new RegExp(
              `no database at ${literally(path.join(database.storeOptions.dataDir as string, "tidings.db"))}\\.`,
            )
          : /the PostgreSQL database at DATABASE_URL has no Tidings tables/,
        label,
      );
      assert.match(run.stderr, /create a new one .*\n?.* with: npm run cli -- init/, label);
      assert.doesNotMatch(run.stderr, /^\s+at /m, `${label}: no stack trace`);
      assert.equal(run.stdout, "", label);
    });
    if (suite.backend === "sqlite") {
      assert.deepEqual(fs.readdirSync(database.storeOptions.dataDir as string), [], "no file in DATA_DIR");
    } else {
      const probe = await openStore(database.storeOptions);
      try {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from information_schema.tables where table_schema = current_schema()`.execute(
          probe.db,
        );
        assert.equal(rows[0]?.n, 0, "no table made");
      } finally {
        await probe.close();
      }
    }
  });

  if (full)
    test("without DATA_DIR the refusal says ./data is used and creates no ./data; migrate creates a database on purpose", async () => {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-cli-cwd-"));
      try {
        const refused = await cliIn(cwd, {}, ["keys", "list"]);
        assert.equal(refused.code, 1, refused.stderr);
        assert.match(
          refused.stderr,
          new RegExp(
            `no database at ${literally(path.join(cwd, "data", "tidings.db"))} \\(DATA_DIR is not set, so \\./data is used\\)`,
          ),
        );
        assert.deepEqual(fs.readdirSync(cwd), []);

        const dataDir = path.join(cwd, "chosen");
        const migrated = await cliIn(cwd, { DATA_DIR: dataDir }, ["migrate"]);
        assert.equal(migrated.code, 0, migrated.stderr);
        assert.ok(fs.existsSync(path.join(dataDir, "tidings.db")));
        const listed = await cliIn(cwd, { DATA_DIR: dataDir }, ["environments", "--json"]);
        assert.equal(listed.code, 0, listed.stderr);
        assert.deepEqual(JSON.parse(listed.stdout), []);
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    });

  test("init --json prints the organization, its two environments and their keys, as JSON", async () => {
    const run = await cli("init", "--json");
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    org = JSON.parse(run.stdout);
    assert.deepEqual(Object.keys(org).sort(), ["environments", "organizationId"]);
    assert.match(org.organizationId, OBJECT_ID);
    assert.deepEqual(
      org.environments.map((env) => env.name),
      ["Development", "Production"],
    );
    for (const env of org.environments) {
      assert.deepEqual(Object.keys(env).sort(), ["_id", "apiKey", "name"]);
      assert.match(env._id, OBJECT_ID);
      assert.match(env.apiKey, API_KEY);
    }
    assert.notEqual(org.environments[0]?.apiKey, org.environments[1]?.apiKey);

    // The same database, opened the way the server opens it.
    store = await openStore(database.storeOptions);
    await store.migrate();
    app = await buildApp({ store });
    await app.ready();
  });

  test("the keys init printed work against the app on the same database, each in its environment", async () => {
    for (const env of org.environments) {
      const res = await status(env.apiKey);
      assert.equal(res.statusCode, 200, res.body);
      const groups = res.json().data as { name: string; _environmentId: string; _organizationId: string }[];
      assert.deepEqual(
        groups.map((g) => [g.name, g._environmentId, g._organizationId]),
        [["General", env._id, org.organizationId]],
      );
    }
    const created = await app.inject({
      method: "POST",
      url: "/v1/notification-groups",
      headers: {
        authorization: `ApiKey ${org.environments[0]?.apiKey}`,
        "content-type": "application/json",
      },
      payload: { name: "From the CLI's key" },
    });
    assert.equal(created.statusCode, 201, created.body);
  });

  if (full)
    test("init without --json says the keys are shown once, and makes a second organization", async () => {
      const run = await cli("init", "--name", "Second org");
      assert.equal(run.code, 0, run.stderr);
      const keys = run.stdout.match(/tid_sk_[A-Za-z0-9_-]+/g) ?? [];
      assert.equal(keys.length, 2, run.stdout);
      assert.match(run.stdout, /shown once/);
      assert.ok(!run.stdout.includes(org.organizationId));
      for (const key of keys) assert.equal((await status(key)).statusCode, 200);
    });

  let created: { id: string; apiKey: string; environmentId: string };

  test("keys create --environment issues a working key for that environment, shown once", async () => {
    const dev = org.environments[0];
    assert.ok(dev);
    const run = await cli("keys", "create", "--environment", dev._id, "--json");
    assert.equal(run.code, 0, run.stderr);
    created = JSON.parse(run.stdout);
    assert.match(created.id, OBJECT_ID);
    assert.match(created.apiKey, API_KEY);
    assert.equal(created.environmentId, dev._id);
    assert.ok(![dev.apiKey, org.environments[1]?.apiKey].includes(created.apiKey));
    const res = await status(created.apiKey);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data[0]._environmentId, dev._id);
    // The environment's first key still works.
    assert.equal((await status(dev.apiKey)).statusCode, 200);

    if (full) {
      const text = await cli("keys", "create", "--environment", dev._id);
      assert.equal(text.code, 0, text.stderr);
      assert.equal((text.stdout.match(/tid_sk_[A-Za-z0-9_-]+/g) ?? []).length, 1, text.stdout);
    }
  });

  test("keys list shows ids, environments and dates, never a key or its hash", async () => {
    const [json, text, filtered] = await Promise.all([
      cli("keys", "list", "--json"),
      ...(full
        ? [cli("keys", "list"), cli("keys", "list", "--environment", created.environmentId, "--json")]
        : []),
    ]);
    assert.ok(json);
    for (const run of [json, text, filtered]) {
      if (!run) continue;
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /tid_sk_/, "no key");
      for (const key of [created.apiKey, ...org.environments.map((e) => e.apiKey)]) {
        assert.ok(!run.stdout.includes(key), "no key");
        assert.ok(!run.stdout.includes(sha256(key)), "no key hash");
      }
      assert.doesNotMatch(run.stdout, /[0-9a-f]{64}/, "nothing hash-like");
    }
    if (text) {
      assert.ok(text.stdout.includes(created.id));
      assert.ok(text.stdout.includes(created.environmentId));
    }
    const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
    const mine = listed.find((k) => k.id === created.id);
    assert.ok(mine, "the new key is listed");
    assert.equal(mine.environmentId, created.environmentId);
    assert.equal(mine.revokedAt, null);
    assert.ok(!Number.isNaN(Date.parse(String(mine.createdAt))));
    for (const entry of listed) {
      for (const field of Object.keys(entry)) assert.doesNotMatch(field, /key$|hash|secret/i, field);
    }
    // At least the two keys of init and the one of keys create.
    assert.ok(listed.length >= 3, json.stdout);
    if (filtered) {
      const only = JSON.parse(filtered.stdout) as { environmentId: string }[];
      assert.ok(only.length >= 2);
      for (const entry of only) assert.equal(entry.environmentId, created.environmentId);
      assert.ok(only.length < listed.length);
    }
  });

  test("keys revoke: the key gets 401 on its next request, reads and writes alike; the others keep working", async () => {
    const firstKey = org.environments[0]?.apiKey ?? "";
    const call = (apiKey: string, method: "GET" | "POST" | "PUT", url: string, payload?: object) =>
      app.inject({
        method,
        url,
        headers: {
          authorization: `ApiKey ${apiKey}`,
          ...(payload ? { "content-type": "application/json" } : {}),
        },
        ...(payload ? { payload } : {}),
      });
    const groups = (await status(firstKey)).json().data;
    const workflow = await call(firstKey, "POST", "/v1/workflows", {
      name: "Revocation",
      notificationGroupId: groups[0]._id,
      steps: [{ template: { type: "in_app", content: "Hi" } }],
    });
    assert.equal(workflow.statusCode, 201, workflow.body);
    const workflowUrl = `/v1/workflows/${workflow.json().data._id}`;
    // The key is used for reads and writes first, so that anything remembering it has had the chance.
    assert.equal((await status(created.apiKey)).statusCode, 200);
    assert.equal(
      (await call(created.apiKey, "PUT", `${workflowUrl}/status`, { active: true })).statusCode,
      200,
    );
    assert.equal(
      (await call(created.apiKey, "POST", "/v1/notification-groups", { name: "Before" })).statusCode,
      201,
    );
    const before = [(await status(firstKey)).json(), (await call(firstKey, "GET", workflowUrl)).json()];

    const run = await cli("keys", "revoke", created.id);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(run.stdout.includes(created.id));
    for (const [path, refused] of [
      ["/v1/notification-groups", await status(created.apiKey)],
      [
        `${workflowUrl}/status`,
        await call(created.apiKey, "PUT", `${workflowUrl}/status`, { active: false }),
      ],
      [
        "/v1/notification-groups",
        await call(created.apiKey, "POST", "/v1/notification-groups", { name: "After" }),
      ],
      [workflowUrl, await call(created.apiKey, "GET", workflowUrl)],
    ] as const) {
      assertErrorBody(refused, 401, { path, message: /^Invalid API key$/ });
      assert.equal(refused.headers["www-authenticate"], "ApiKey");
    }
    assert.deepEqual(
      [(await status(firstKey)).json(), (await call(firstKey, "GET", workflowUrl)).json()],
      before,
      "nothing the revoked key sent was applied",
    );

    const [again, listed] = await Promise.all([
      cli("keys", "revoke", created.id),
      cli("keys", "list", "--json"),
    ]);
    assert.notEqual(again.code, 0, "revoking twice is refused");
    assert.match(again.stderr, new RegExp(created.id));
    const entry = (JSON.parse(listed.stdout) as { id: string; revokedAt: string | null }[]).find(
      (k) => k.id === created.id,
    );
    assert.ok(entry?.revokedAt && !Number.isNaN(Date.parse(entry.revokedAt)), "listed as revoked");
  });

  if (full)
    test("keys create and keys revoke refuse what does not exist, with a message and a non-zero exit", async () => {
      const [noEnv, noKey] = await Promise.all([
        cli("keys", "create", "--environment", "000000000000000000000000"),
        cli("keys", "revoke", "000000000000000000000000"),
      ]);
      for (const run of [noEnv, noKey]) {
        assert.notEqual(run.code, 0);
        assert.match(run.stderr, /000000000000000000000000/);
        assert.doesNotMatch(run.stdout, /tid_sk_/);
      }
    });
  // Kysely's migrator looks for its bookkeeping table in every schema unless told which one: a
  // database where another schema already has one (another app on Kysely, a second Tidings) must
  // not make the default-schema migration fail. PostgreSQL only: SQLite has no schemas.
  if (suite.backend === "postgres")
    test("init works on a database where another schema holds a Kysely migration table", async () => {
      const other = await suite.database();
      const otherApp = await openStore({ ...other.storeOptions, pgSchema: "other_app" });
      await otherApp.migrate();
      await otherApp.close();
      const run = await runTs("src/cli.ts", ["init", "--json"], other.env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).environments.length, 2);
    });

  const badUsage: [string, string[], RegExp, Record<string, string>?][] = [
    ["no command", [], /Usage:/],
    ["an unknown command", ["frobnicate"], /unknown command "frobnicate"/],
    ["an unknown option", ["init", "--bogus"], /--bogus/],
    ["keys create without --environment", ["keys", "create"], /--environment/],
    ["keys revoke without an id", ["keys", "revoke"], /key id/],
    [
      "a DATABASE_URL that is not PostgreSQL",
      ["init"],
      /DATABASE_URL/,
      { DATABASE_URL: "mysql://x@localhost/db" },
    ],
  ];

  // Refused before any database is opened: checked once, against an empty DATA_DIR.
  if (full)
    test("bad usage exits non-zero with a message and touches no database; --help exits 0", async () => {
      const empty = await suite.database();
      const [help, ...runs] = await Promise.all([
        runTs("src/cli.ts", ["--help"], empty.env),
        ...badUsage.map(([, args, , env]) => runTs("src/cli.ts", args, { ...empty.env, ...env })),
      ]);
      runs.forEach((run, i) => {
        const [label, , message] = badUsage[i] ?? [];
        assert.notEqual(run.code, 0, `${label}: exit code`);
        assert.match(run.stderr + run.stdout, message as RegExp, `${label}: ${run.stderr}`);
        assert.doesNotMatch(run.stdout + run.stderr, /tid_sk_/, `${label}: no key printed`);
        assert.doesNotMatch(run.stderr, /^\s+at /m, `${label}: no stack trace`);
      });
      // DATA_DIR holds no database file.
      assert.deepEqual(fs.readdirSync(empty.storeOptions.dataDir as string), []);
      assert.equal(help?.code, 0);
      assert.match(help?.stdout ?? "", /keys create --environment/);
    });
});
