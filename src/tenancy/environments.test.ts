import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { Migrator, sql } from "kysely";
import { dropSchema, postgresUrl } from "../../test/backends.ts";
import { assertErrorBody } from "../../test/error-body.ts";
import { forEachBackend } from "../../test/harness.ts";
import { postgresTypes, sqliteTypes } from "../store/migrations/column-types.ts";
import { migrationProvider } from "../store/migrations/index.ts";
import { openStore, type Store } from "../store/store.ts";

forEachBackend("environments", (ctx) => {
  test("GET /v1/environments/me: the key's environment; Production starts with HMAC on, Development off", async () => {
    const { dev, prod, organizationId } = await ctx.tenant();
    const mine = await ctx.client(dev.apiKey).get("/v1/environments/me");
    assert.equal(mine.statusCode, 200, mine.body);
    const d = mine.json().data;
    assert.deepEqual(
      { ...d, identifier: "", createdAt: "", updatedAt: "" },
      {
        _id: dev.environmentId,
        name: "Development",
        identifier: "",
        _organizationId: organizationId,
        _parentId: "",
        hmac: false,
        createdAt: "",
        updatedAt: "",
      },
    );
    assert.match(d.identifier, /^[A-Za-z0-9_-]{12}$/);
    const p = (await ctx.client(prod.apiKey).get("/v1/environments/me")).json().data;
    assert.equal(p.name, "Production");
    assert.equal(p.hmac, true);
    assert.equal(p._parentId, dev.environmentId);
    assert.notEqual(p.identifier, d.identifier);
    const another = (await ctx.client((await ctx.tenant()).dev.apiKey).get("/v1/environments/me")).json()
      .data;
    assert.notEqual(another.identifier, d.identifier);
  });

  test("PUT /v1/environments/me turns HMAC on and off in Development, for that environment only", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const on = await api.put("/v1/environments/me", { hmac: true });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(on.json().data.hmac, true);
    assert.equal((await api.get("/v1/environments/me")).json().data.hmac, true);
    // The same value again changes nothing, not even updatedAt.
    const again = await api.put("/v1/environments/me", { hmac: true });
    assert.deepEqual(again.json(), on.json());
    const off = await api.put("/v1/environments/me", { hmac: false });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().data.hmac, false);
    assert.equal((await ctx.client(prod.apiKey).get("/v1/environments/me")).json().data.hmac, true);
    for (const [body, fields] of [
      [{}, ["hmac"]],
      [{ hmac: "true" }, ["hmac"]],
      [{ hmac: true, name: "Renamed" }, ["name"]],
    ] as const) {
      assertErrorBody(await api.put("/v1/environments/me", body), 400, {
        path: "/v1/environments/me",
        fields: [...fields],
      });
    }
    assert.equal((await api.get("/v1/environments/me")).json().data.name, "Development");
  });

  test("Production keeps HMAC on: hmac false is a 403 saying why, and changes nothing", async () => {
    const { prod } = await ctx.tenant();
    const api = ctx.client(prod.apiKey);
    const before = (await api.get("/v1/environments/me")).json().data;
    assertErrorBody(await api.put("/v1/environments/me", { hmac: false }), 403, {
      path: "/v1/environments/me",
      message: /^HMAC cannot be turned off in Production: .*Development can turn it off/,
    });
    assert.deepEqual((await api.get("/v1/environments/me")).json().data, before);
    assert.equal(before.hmac, true);
    // Turning it on, where it is on, is still fine.
    assert.equal((await api.put("/v1/environments/me", { hmac: true })).statusCode, 200);
  });

  test("GET /v1/environments: the organization's environments, Development first, the caller's keys masked and no other's", async () => {
    const { dev, prod } = await ctx.tenant();
    await ctx.tenant();
    const res = await ctx.client(prod.apiKey).get("/v1/environments");
    assert.equal(res.statusCode, 200, res.body);
    const envs = res.json().data;
    assert.deepEqual(
      envs.map((e: { _id: string; name: string }) => [e._id, e.name]),
      [
        [dev.environmentId, "Development"],
        [prod.environmentId, "Production"],
      ],
    );
    for (const e of envs)
      assert.deepEqual(Object.keys(e).sort(), [
        "_id",
        "_organizationId",
        "_parentId",
        "apiKeys",
        "createdAt",
        "hmac",
        "identifier",
        "name",
        "updatedAt",
      ]);
    // Production's key, masked to its last four characters, as /environments/api-keys lists it;
    // Development's keys are not Production's to see.
    const listed = await ctx.client(prod.apiKey).get("/v1/environments/api-keys");
    assert.deepEqual(envs[1].apiKeys, listed.json().data);
    assert.equal(envs[1].apiKeys.length, 1);
    assert.equal(envs[1].apiKeys[0].key, `tid_sk_****${prod.apiKey.slice(-4)}`);
    assert.deepEqual(envs[0].apiKeys, []);
    assert.ok(
      !res.body.includes(prod.apiKey) && !res.body.includes(dev.apiKey),
      "no whole key in the answer",
    );
  });

  test("GET /v1/environments/api-keys: this environment's live keys, masked to their last four characters", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).get("/v1/environments/api-keys");
    assert.equal(res.statusCode, 200, res.body);
    const keys = res.json().data;
    assert.equal(keys.length, 1);
    assert.equal(keys[0].key, `tid_sk_****${dev.apiKey.slice(-4)}`);
    assert.equal(keys[0]._environmentId, dev.environmentId);
    assert.equal(keys[0]._userId, "");
    assert.ok(!res.body.includes(dev.apiKey.slice(7, 20)), "the key itself is not in the answer");
  });

  test("POST /v1/environments/api-keys/regenerate: a new key shown once; the calling key is refused at once", async () => {
    const { dev, prod } = await ctx.tenant();
    // An Idempotency-Key (as @novu/node sends with retries on) is ignored: nothing is stored.
    const res = await ctx
      .client(dev.apiKey)
      .post("/v1/environments/api-keys/regenerate", undefined, { "idempotency-key": "regen-1" });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers["idempotency-replay"], undefined);
    const [created] = res.json().data;
    assert.match(created.key, /^tid_sk_[A-Za-z0-9_-]{32}$/);
    assert.equal(created._environmentId, dev.environmentId);
    const old = await ctx.client(dev.apiKey).get("/v1/environments/me");
    assertErrorBody(old, 401, { path: "/v1/environments/me", message: /^Invalid API key$/ });
    const fresh = ctx.client(created.key);
    assert.equal((await fresh.get("/v1/environments/me")).json().data._id, dev.environmentId);
    const listed = (await fresh.get("/v1/environments/api-keys")).json().data;
    assert.deepEqual(
      listed.map((k: { _id: string; key: string }) => [k._id, k.key]),
      [[created._id, `tid_sk_****${created.key.slice(-4)}`]],
    );
    // Only the calling key: Production's is untouched.
    assert.equal((await ctx.client(prod.apiKey).get("/v1/environments/me")).statusCode, 200);
    // The plaintext was never stored, not even as an idempotent response.
    const stored = await ctx.store.db
      .selectFrom("idempotency_keys")
      .select(["key", "response_body"])
      .where("environment_id", "=", dev.environmentId)
      .execute();
    assert.deepEqual(stored, []);
  });

  test("a bodiless POST as axios sends it (a form Content-Type, no bytes) is taken; a form body is a 415", async () => {
    const { dev } = await ctx.tenant();
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const url = "/v1/environments/api-keys/regenerate";
    const withBody = await ctx
      .client(dev.apiKey)
      .request({ method: "POST", url, headers: form, payload: "a=1" });
    assertErrorBody(withBody, 415, { path: url, message: /^Content-Type must be application\/json$/ });
    // A route that takes a body refuses an empty form too.
    const topic = await ctx
      .client(dev.apiKey)
      .request({ method: "POST", url: "/v1/topics", headers: form, payload: "" });
    assertErrorBody(topic, 415, { path: "/v1/topics" });
    const res = await ctx.client(dev.apiKey).request({ method: "POST", url, headers: form, payload: "" });
    assert.equal(res.statusCode, 201, res.body);
  });
});

/**
 * Migration 0003 on a database that already has organizations: their environments get an
 * identifier each (random, unique) and HMAC on for Production only.
 */
describe("migration 0003 on existing environments", () => {
  async function backfilled(store: Store, schema?: string) {
    const provider = migrationProvider(store.backend === "sqlite" ? sqliteTypes : postgresTypes);
    const migrator = new Migrator({
      db: store.db,
      provider,
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const to0002 = await migrator.migrateTo("0002-workflow-search");
    assert.equal(to0002.error, undefined);
    const now = new Date().toISOString();
    await sql`insert into organizations (id, name, created_at, updated_at) values ('org1', 'Old', ${now}, ${now})`.execute(
      store.db,
    );
    for (const [id, name] of [
      ["env-dev", "Development"],
      ["env-prod", "Production"],
      ["env-qa", "QA"],
    ]) {
      await sql`insert into environments (id, organization_id, name, parent_id, created_at, updated_at)
        values (${id}, 'org1', ${name}, '', ${now}, ${now})`.execute(store.db);
    }
    const latest = await migrator.migrateToLatest();
    assert.equal(latest.error, undefined);
    const rows = await store.db
      .selectFrom("environments")
      .select(["id", "identifier", "hmac"])
      .orderBy("id")
      .execute();
    return rows.map((r) => ({ id: r.id, identifier: r.identifier, hmac: r.hmac === true || r.hmac === 1 }));
  }

  function check(rows: { id: string; identifier: string; hmac: boolean }[]) {
    assert.deepEqual(
      rows.map((r) => [r.id, r.hmac]),
      [
        ["env-dev", false],
        ["env-prod", true],
        ["env-qa", false],
      ],
    );
    for (const r of rows) assert.match(r.identifier, /^[A-Za-z0-9_-]{12}$/);
    assert.equal(new Set(rows.map((r) => r.identifier)).size, 3);
  }

  test("SQLite", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-migration-"));
    const store = await openStore({ dataDir });
    try {
      check(await backfilled(store));
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL", { skip: postgresUrl ? false : "no PostgreSQL" }, async () => {
    const url = postgresUrl as string;
    const schema = `test_mig_${process.pid}_${randomBytes(3).toString("hex")}`;
    const store = await openStore({ databaseUrl: url, pgSchema: schema, pgPoolSize: 2 });
    try {
      check(await backfilled(store, schema));
    } finally {
      await store.close();
      await dropSchema(url, schema);
    }
  });
});

/** Migration 0013: a Production environment that had turned HMAC off gets it back; others keep theirs. */
describe("migration 0013 on environments that turned HMAC off", () => {
  async function migrated(store: Store, schema?: string) {
    const provider = migrationProvider(store.backend === "sqlite" ? sqliteTypes : postgresTypes);
    const migrator = new Migrator({
      db: store.db,
      provider,
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    assert.equal((await migrator.migrateTo("0010-job-transaction-index")).error, undefined);
    const now = "2026-01-01T00:00:00.000Z";
    const off = store.backend === "sqlite" ? 0 : false;
    const on = store.backend === "sqlite" ? 1 : true;
    for (const org of ["org1", "org2"]) {
      await sql`insert into organizations (id, name, created_at, updated_at) values (${org}, 'Old', ${now}, ${now})`.execute(
        store.db,
      );
    }
    for (const [id, org, name, hmac] of [
      ["env-dev", "org1", "Development", on],
      ["env-dev-off", "org2", "Development", off],
      ["env-prod", "org1", "Production", off],
    ] as const) {
      await sql`insert into environments (id, organization_id, name, parent_id, identifier, hmac, created_at, updated_at)
        values (${id}, ${org}, ${name}, '', ${id}, ${hmac}, ${now}, ${now})`.execute(store.db);
    }
    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const rows = await store.db.selectFrom("environments").select(["id", "hmac"]).orderBy("id").execute();
    return rows.map((r) => [r.id, r.hmac === true || r.hmac === 1]);
  }
  const expected = [
    ["env-dev", true],
    ["env-dev-off", false],
    ["env-prod", true],
  ];

  test("SQLite", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-migration-"));
    const store = await openStore({ dataDir });
    try {
      assert.deepEqual(await migrated(store), expected);
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL", { skip: postgresUrl ? false : "no PostgreSQL" }, async () => {
    const url = postgresUrl as string;
    const schema = `test_mig_${process.pid}_${randomBytes(3).toString("hex")}`;
    const store = await openStore({ databaseUrl: url, pgSchema: schema, pgPoolSize: 2 });
    try {
      assert.deepEqual(await migrated(store, schema), expected);
    } finally {
      await store.close();
      await dropSchema(url, schema);
    }
  });
});
