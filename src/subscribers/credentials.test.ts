import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { Migrator, sql } from "kysely";
import { dropSchema, postgresUrl } from "../../test/backends.ts";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, storedChannelCredentials } from "../../test/factories.ts";
import { forEachBackend, TEST_SECRET_KEY } from "../../test/harness.ts";
import { systemClock } from "../clock.ts";
import { postgresTypes, sqliteTypes } from "../store/migrations/column-types.ts";
import { migrationProvider } from "../store/migrations/index.ts";
import { SecretBox } from "../store/secret-box.ts";
import { openStore, type Store } from "../store/store.ts";
import { presentSubscriber } from "./presenter.ts";
import { getSubscriber, openChannelCredentials } from "./service.ts";

const PATH = "/v1/subscribers/u/credentials";

forEachBackend("subscriber credentials", (ctx) => {
  async function setup() {
    const { dev, prod, organizationId } = await ctx.tenant();
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "u" });
    const stored = () => storedChannelCredentials(ctx, { organizationId, ...dev }, "u");
    return { dev, prod, api: ctx.client(dev.apiKey), stored };
  }
  const channelsOf = async (api: ReturnType<typeof ctx.client>) =>
    (await api.get("/v1/subscribers/u")).json().data.channels;

  test("PUT sets one provider's credentials, replacing what it had; other providers stay; answers mask them", async () => {
    const { api, stored } = await setup();
    const first = await api.put(PATH, {
      providerId: "slack",
      integrationIdentifier: "slack-main",
      credentials: { webhookUrl: "https://hooks.slack.com/a" },
    });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().data.channels, [
      {
        providerId: "slack",
        integrationIdentifier: "slack-main",
        _integrationId: "",
        credentials: { webhookUrl: "https://hooks.slack.com/********", deviceTokens: [] },
      },
    ]);
    await api.put(PATH, { providerId: "fcm", credentials: { deviceTokens: ["a", "b", "a"] } });
    await api.put(PATH, { providerId: "fcm", credentials: { deviceTokens: ["c"] } });
    const channels = await channelsOf(api);
    assert.deepEqual(
      channels.map((c: { providerId: string; credentials: unknown }) => [c.providerId, c.credentials]),
      [
        ["slack", { webhookUrl: "https://hooks.slack.com/********", deviceTokens: [] }],
        ["fcm", { webhookUrl: "", deviceTokens: ["********"] }],
      ],
    );
    assert.deepEqual(await stored(), [
      { providerId: "slack", webhookUrl: "https://hooks.slack.com/a", deviceTokens: [] },
      { providerId: "fcm", webhookUrl: "", deviceTokens: ["c"] },
    ]);
  });

  test("PATCH merges: a webhookUrl replaces, device tokens join, an empty list clears", async () => {
    const { api, stored } = await setup();
    await api.put(PATH, {
      providerId: "fcm",
      credentials: { deviceTokens: ["a"], webhookUrl: "https://x.example/1" },
    });
    const merged = await api.patch(PATH, { providerId: "fcm", credentials: { deviceTokens: ["b", "a"] } });
    assert.equal(merged.statusCode, 200, merged.body);
    assert.deepEqual(merged.json().data.channels[0].credentials, {
      webhookUrl: "https://x.example/********",
      deviceTokens: ["********", "********"],
    });
    assert.deepEqual(await stored(), [
      { providerId: "fcm", webhookUrl: "https://x.example/1", deviceTokens: ["a", "b"] },
    ]);
    await api.patch(PATH, { providerId: "fcm", credentials: { webhookUrl: "https://x.example/2" } });
    assert.deepEqual(await stored(), [
      { providerId: "fcm", webhookUrl: "https://x.example/2", deviceTokens: ["a", "b"] },
    ]);
    await api.patch(PATH, { providerId: "fcm", credentials: { deviceTokens: [] } });
    assert.deepEqual((await channelsOf(api))[0].credentials.deviceTokens, []);
    assert.deepEqual((await stored())[0]?.deviceTokens, []);
    // PATCH for a provider it has none for adds it.
    await api.patch(PATH, {
      providerId: "discord",
      credentials: { webhookUrl: "https://discord.example/w" },
    });
    assert.equal((await channelsOf(api)).length, 2);
  });

  test("DELETE removes one provider's credentials (204); an absent provider is already removed", async () => {
    const { api } = await setup();
    await api.put(PATH, { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/a" } });
    await api.put(PATH, { providerId: "discord", credentials: { webhookUrl: "https://discord.example/w" } });
    const res = await api.delete(`${PATH}/slack`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, "");
    assert.deepEqual(
      (await channelsOf(api)).map((c: { providerId: string }) => c.providerId),
      ["discord"],
    );
    assert.equal((await api.delete(`${PATH}/slack`)).statusCode, 204);
    assertErrorBody(await api.delete("/v1/subscribers/nobody/credentials/slack"), 404, {
      path: "/v1/subscribers/nobody/credentials/slack",
    });
  });

  for (const [label, body, fields] of [
    [
      "a webhook that is not a URL",
      { providerId: "slack", credentials: { webhookUrl: "not a url" } },
      ["credentials.webhookUrl"],
    ],
    [
      "a javascript: webhook",
      { providerId: "slack", credentials: { webhookUrl: "javascript:alert(1)" } },
      ["credentials.webhookUrl"],
    ],
    ["no providerId", { credentials: {} }, ["providerId"]],
    ["a providerId with a slash", { providerId: "a/b", credentials: {} }, ["providerId"]],
    ["no credentials", { providerId: "slack" }, ["credentials"]],
    [
      "device tokens that are not strings",
      { providerId: "fcm", credentials: { deviceTokens: [1] } },
      ["credentials.deviceTokens[0]"],
    ],
    ["an unknown credential", { providerId: "fcm", credentials: { apiKey: "x" } }, ["credentials.apiKey"]],
  ] as const) {
    test(`${label} → 400 (PUT and PATCH), nothing changes`, async () => {
      const { api } = await setup();
      await api.put(PATH, { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/a" } });
      const before = await channelsOf(api);
      assertErrorBody(await api.put(PATH, body), 400, { path: PATH, fields: [...fields] });
      assertErrorBody(await api.patch(PATH, body), 400, { path: PATH, fields: [...fields] });
      assert.deepEqual(await channelsOf(api), before);
    });
  }

  test("another environment's subscriber is a 404 and keeps its credentials", async () => {
    const { prod } = await setup();
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "p" });
    const papi = ctx.client(prod.apiKey);
    await papi.put("/v1/subscribers/p/credentials", {
      providerId: "slack",
      credentials: { webhookUrl: "https://h.example/p" },
    });
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const body = { providerId: "slack", credentials: { webhookUrl: "https://evil.example" } };
    assertErrorBody(await api.put("/v1/subscribers/p/credentials", body), 404, {
      path: "/v1/subscribers/p/credentials",
    });
    assertErrorBody(await api.patch("/v1/subscribers/p/credentials", body), 404, {
      path: "/v1/subscribers/p/credentials",
    });
    assert.equal(
      (await papi.get("/v1/subscribers/p")).json().data.channels[0].credentials.webhookUrl,
      "https://h.example/********",
    );
  });

  test("sent back as answers show them, credentials keep their values: a read-modify-write loses nothing", async () => {
    const { api, stored } = await setup();
    await api.put(PATH, {
      providerId: "slack",
      credentials: { webhookUrl: "https://hooks.slack.com/services/T1/B1/secret" },
    });
    await api.put(PATH, { providerId: "fcm", credentials: { deviceTokens: ["token-1", "token-2"] } });
    const read = (await api.get("/v1/subscribers/u")).json().data;
    // The whole subscriber written back (PUT with its channels), as a client that edits one field does.
    const written = await api.put("/v1/subscribers/u", {
      firstName: "Edited",
      channels: read.channels.map(
        (c: { providerId: string; integrationIdentifier: string; credentials: unknown }) => ({
          providerId: c.providerId,
          integrationIdentifier: c.integrationIdentifier,
          credentials: c.credentials,
        }),
      ),
    });
    assert.equal(written.statusCode, 200, written.body);
    assert.deepEqual(written.json().data.channels, read.channels);
    // A new token sent beside the masked ones joins the stored tokens.
    await api.put(PATH, { providerId: "fcm", credentials: { deviceTokens: ["********", "token-3"] } });
    assert.deepEqual(await stored(), [
      { providerId: "slack", webhookUrl: "https://hooks.slack.com/services/T1/B1/secret", deviceTokens: [] },
      { providerId: "fcm", webhookUrl: "", deviceTokens: ["token-1", "token-2", "token-3"] },
    ]);
  });
});

/**
 * Migration 0014 on a database whose subscribers kept their channel credentials in the clear: each
 * channel is sealed (and answers show it masked), opened again by the chat step with the same key;
 * without a key the migration refuses to run rather than leave them in the clear.
 */
describe("migration 0014 on channel credentials kept in the clear", () => {
  const clear = [
    {
      providerId: "slack",
      integrationIdentifier: "",
      credentials: { webhookUrl: "https://hooks.slack.com/services/T9/B9/clear-secret", deviceTokens: [] },
    },
    {
      providerId: "fcm",
      integrationIdentifier: "fcm-main",
      credentials: { webhookUrl: "", deviceTokens: ["device-secret-1", "device-secret-2"] },
    },
  ];

  async function legacyDatabase(store: Store, schema: string | undefined) {
    const provider = (secrets?: SecretBox) =>
      migrationProvider(store.backend === "sqlite" ? sqliteTypes : postgresTypes, { secrets });
    const migrator = (secrets?: SecretBox) =>
      new Migrator({
        db: store.db,
        provider: provider(secrets),
        ...(schema ? { migrationTableSchema: schema } : {}),
      });
    assert.equal((await migrator().migrateTo("0013-production-hmac")).error, undefined);
    const now = "2026-01-01T00:00:00.000Z";
    await sql`insert into organizations (id, name, created_at, updated_at) values ('org1', 'Old', ${now}, ${now})`.execute(
      store.db,
    );
    await sql`insert into environments (id, organization_id, name, parent_id, identifier, created_at, updated_at)
      values ('env1', 'org1', 'Development', '', 'app-env1', ${now}, ${now})`.execute(store.db);
    for (const [id, subscriberId, channels] of [
      ["0000000000000000000000a1", "with-channels", JSON.stringify(clear)],
      ["0000000000000000000000a2", "without", "[]"],
    ]) {
      await sql`insert into subscribers (id, organization_id, environment_id, subscriber_id, channels, created_at, updated_at)
        values (${id}, 'org1', 'env1', ${subscriberId}, ${channels}, ${now}, ${now})`.execute(store.db);
    }
    return migrator;
  }

  async function check(store: Store, schema?: string) {
    const migrator = await legacyDatabase(store, schema);
    const refused = await migrator().migrateToLatest();
    assert.match(String(refused.error), /must be sealed with TIDINGS_SECRET_KEY/);
    const box = new SecretBox(TEST_SECRET_KEY);
    assert.equal((await migrator(box).migrateToLatest()).error, undefined);

    const rows = await store.db.selectFrom("subscribers").select(["subscriber_id", "channels"]).execute();
    for (const row of rows) assert.doesNotMatch(String(row.channels), /secret/, "sealed in the row");
    const deps = { db: store.db, clock: systemClock, secrets: box };
    const tenant = { organizationId: "org1", environmentId: "env1", actorId: "" };
    const subscriber = await getSubscriber(deps, tenant, "with-channels");
    assert.deepEqual(
      presentSubscriber(subscriber).channels.map((c) => c.credentials),
      [
        { webhookUrl: "https://hooks.slack.com/********", deviceTokens: [] },
        { webhookUrl: "", deviceTokens: ["********", "********"] },
      ],
    );
    assert.deepEqual(
      subscriber.channels.map((channel) => openChannelCredentials(deps, subscriber, channel)),
      clear.map((c) => c.credentials),
    );
    assert.deepEqual((await getSubscriber(deps, tenant, "without")).channels, []);
  }

  test("SQLite", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-migration-"));
    const store = await openStore({ dataDir });
    try {
      await check(store);
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
      await check(store, schema);
    } finally {
      await store.close();
      await dropSchema(url, schema);
    }
  });
});
