import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";
import type { Store } from "../store/store.ts";
import { findKeyOwner, listApiKeys, revokeApiKey } from "../tenancy/repository.ts";
import { cachedKeys } from "./key-verifier.ts";

// How many times the app looked a key up in the database (each backend's suite runs on its own).
let lookups = 0;

forEachBackend(
  "API keys remembered for key-guarded routes",
  (ctx) => {
    /**
     * Another connection to the app's database, standing for another process (the CLI revoking a
     * key, or a second API process on the same PostgreSQL).
     */
    let other: Store;
    before(async () => {
      other = await ctx.connect();
    });

    /** A fresh organization's Development key, its id, and one workflow of that environment. */
    async function fixture() {
      const { dev } = await ctx.tenant();
      const [key] = await listApiKeys(ctx.store.db, dev.environmentId);
      assert.ok(key);
      const auth = { authorization: `ApiKey ${dev.apiKey}` };
      const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
        name: `Keys ${randomBytes(3).toString("hex")}`,
        steps: [],
      });
      const workflowId = created._id as string;
      const put = (active: unknown, id = workflowId, prefix = "/v1/workflows") =>
        ctx.app.inject({ method: "PUT", url: `${prefix}/${id}/status`, headers: auth, payload: { active } });
      const statusPath = `/v1/workflows/${workflowId}/status`;
      return { keyId: key.id, auth, workflowId, put, statusPath };
    }

    function assertRefused(
      res: { statusCode: number; headers: Record<string, unknown>; body: string },
      path: string,
    ) {
      assertErrorBody(res, 401, { path, message: /^Invalid API key$/ });
      assert.equal(res.headers["www-authenticate"], "ApiKey");
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
      const { keyId, put, statusPath } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      assert.equal(await revokeApiKey(other.db, keyId, new Date().toISOString()), true);
      assertRefused(await put(false), statusPath);
      assertRefused(await put(false), statusPath);
    });

    test("a key revoked through the app's own connection is refused on its very next request", async () => {
      const { keyId, put, statusPath } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      assert.equal(await revokeApiKey(ctx.store.db, keyId, new Date().toISOString()), true);
      assertRefused(await put(false), statusPath);
    });

    test("a revoked key changes nothing: the workflow stays as it was", async () => {
      const { keyId, put, workflowId, statusPath } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      await revokeApiKey(other.db, keyId, new Date().toISOString());
      assertRefused(await put(false), statusPath);
      const row = await other.db
        .selectFrom("workflows")
        .select("active")
        .where("id", "=", workflowId)
        .executeTakeFirstOrThrow();
      assert.equal(Boolean(row.active), true);
    });

    test("a revoked key is told 401, not 400, even with an invalid body", async () => {
      const { keyId, put, statusPath } = await fixture();
      assert.equal((await put(true)).statusCode, 200);
      await revokeApiKey(other.db, keyId, new Date().toISOString());
      assertRefused(await put("yes"), statusPath);
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
      const read = await ctx.app.inject({ method: "GET", url: `/v1/workflows/${workflowId}`, headers: auth });
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(lookups, before + 1);
      await revokeApiKey(other.db, keyId, new Date().toISOString());
      assertRefused(
        await ctx.app.inject({ method: "GET", url: `/v1/workflows/${workflowId}`, headers: auth }),
        `/v1/workflows/${workflowId}`,
      );
    });
  },
  {
    app: (store) => ({
      keyLookup: cachedKeys((hash) => {
        lookups++;
        return findKeyOwner(store.db, hash);
      }),
    }),
  },
);
