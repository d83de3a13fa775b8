import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { backends, dropSchema } from "../../test/backends.ts";
import { buildApp } from "../app.ts";
import type { App } from "../http/types.ts";
import { listGroups } from "../notification-groups/repository.ts";
import { openStore, type Store } from "../store/store.ts";
import { findKeyOwner, listApiKeys, revokeApiKey } from "../tenancy/repository.ts";
import { createOrganization } from "../tenancy/service.ts";
import { cachedKeys } from "./key-verifier.ts";

/**
 * Two stores on one database: the app's, and another connection standing for another process
 * (the CLI revoking a key, or a second API process on the same PostgreSQL).
 */
interface Pair {
  app: Store;
  other: Store;
  destroy(): Promise<void>;
}

async function sqlitePair(): Promise<Pair> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-keys-"));
  const app = await openStore({ dataDir });
  await app.migrate();
  const other = await openStore({ dataDir });
  return {
    app,
    other,
    async destroy() {
      await other.close();
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function postgresPair(url: string): Promise<Pair> {
  const pgSchema = `test_keys_${process.pid}_${randomBytes(4).toString("hex")}`;
  const app = await openStore({ databaseUrl: url, pgSchema, pgPoolSize: 4 });
  await app.migrate();
  const other = await openStore({ databaseUrl: url, pgSchema, pgPoolSize: 2 });
  return {
    app,
    other,
    async destroy() {
      await other.close();
      await app.close();
      await dropSchema(url, pgSchema);
    },
  };
}

const pgUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

for (const backend of backends) {
  describe(`API keys remembered for key-guarded routes [${backend.name}]`, () => {
    let pair: Pair;
    let app: App;
    let lookups = 0;

    before(async () => {
      pair = backend.name === "sqlite" ? await sqlitePair() : await postgresPair(pgUrl);
      const store = pair.app;
      const keys = cachedKeys((hash) => {
        lookups++;
        return findKeyOwner(store.db, hash);
      });
      app = await buildApp({ store, keyLookup: keys });
      await app.ready();
    });
    after(async () => {
      await app?.close();
      await pair?.destroy();
    });

    /** A fresh organization's Development key, its id, and one workflow of that environment. */
    async function fixture() {
      const org = await createOrganization(pair.app.db, "Keys");
      const dev = org.environments.find((e) => e.name === "Development");
      assert.ok(dev);
      const [key] = await listApiKeys(pair.app.db, dev._id);
      assert.ok(key);
      const [group] = await listGroups(pair.app.db, dev._id);
      assert.ok(group);
      const auth = { authorization: `ApiKey ${dev.apiKey}` };
      const created = await app.inject({
        method: "POST",
        url: "/v1/workflows",
        headers: auth,
        payload: {
          name: `Keys ${randomBytes(3).toString("hex")}`,
          notificationGroupId: group._id,
          steps: [],
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      const workflowId = created.json().data._id as string;
      const put = (active: unknown, id = workflowId, prefix = "/v1/workflows") =>
        app.inject({ method: "PUT", url: `${prefix}/${id}/status`, headers: auth, payload: { active } });
      return { keyId: key.id, auth, workflowId, put };
    }

    function assertRefused(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) {
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers["www-authenticate"], "ApiKey");
      const body = res.json() as { statusCode: number; message: string };
      assert.equal(body.statusCode, 401);
      assert.equal(body.message, "Invalid API key");
    }

    test("a known key switches a workflow with no lookup of its own", async () => {
      const { put } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      const before = lookups;
      const res = await put(false);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.active, false);
      const legacy = await put(true, undefined, "/v1/notification-templates");
      assert.equal(legacy.statusCode, 200, legacy.body);
      assert.equal(lookups, before, "the remembered key was used");
    });

    test("a key revoked through another connection is refused on its very next request", async () => {
      const { keyId, put } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      assert.equal(await revokeApiKey(pair.other.db, keyId, new Date().toISOString()), true);
      assertRefused(await put(false));
      assertRefused(await put(false));
    });

    test("a key revoked through the app's own connection is refused on its very next request", async () => {
      const { keyId, put } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      assert.equal(await revokeApiKey(pair.app.db, keyId, new Date().toISOString()), true);
      assertRefused(await put(false));
    });

    test("a revoked key changes nothing: the workflow stays as it was", async () => {
      const { keyId, put, workflowId } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      await revokeApiKey(pair.other.db, keyId, new Date().toISOString());
      assertRefused(await put(false));
      const row = await pair.other.db
        .selectFrom("workflows")
        .select("active")
        .where("id", "=", workflowId)
        .executeTakeFirstOrThrow();
      assert.equal(Boolean(row.active), true);
    });

    test("a revoked key is told 401, not 400, even with an invalid body", async () => {
      const { keyId, put } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      await revokeApiKey(pair.other.db, keyId, new Date().toISOString());
      assertRefused(await put("yes"));
    });

    test("a live remembered key still gets 404 for a workflow that is not there, and 400 for a bad body", async () => {
      const { put } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      const missing = await put(true, "65f1c0ffee0123456789abcd");
      assert.equal(missing.statusCode, 404, missing.body);
      const bad = await put("yes");
      assert.equal(bad.statusCode, 400, bad.body);
    });

    test("routes without the guard look the key up on every request", async () => {
      const { keyId, put, auth, workflowId } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      const before = lookups;
      const read = await app.inject({ method: "GET", url: `/v1/workflows/${workflowId}`, headers: auth });
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(lookups, before + 1);
      await revokeApiKey(pair.other.db, keyId, new Date().toISOString());
      assertRefused(await app.inject({ method: "GET", url: `/v1/workflows/${workflowId}`, headers: auth }));
    });
  });
}
