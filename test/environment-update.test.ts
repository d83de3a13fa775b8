import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "./error-body.ts";
import { uniqueName } from "./factories.ts";
import { forEachBackend } from "./harness.ts";

// PUT /v1/environments/:id: besides the name and the parent, the public identifier (what the inbox
// widget names) and the HMAC switch, within the organization's environments.

forEachBackend("environment settings", (ctx) => {
  test("an environment's identifier and HMAC change; a taken identifier, Production's HMAC off and other organizations' environments are refused", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const identifier = `app-${Date.now()}-${process.pid}`;
    const url = `/v1/environments/${dev.environmentId}`;
    const res = await api.put(url, { identifier, hmac: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.identifier, identifier);
    const me = (await api.get("/v1/environments/me")).json().data;
    assert.deepEqual([me.identifier, me.hmac], [identifier, true]);
    assert.equal((await api.put(url, { hmac: false })).json().data.hmac, false);

    const prodUrl = `/v1/environments/${prod.environmentId}`;
    assertErrorBody(await api.put(prodUrl, { identifier }), 409, { path: prodUrl });
    assertErrorBody(await api.put(prodUrl, { hmac: false }), 403, { path: prodUrl });
    assertErrorBody(await api.put(url, { identifier: "" }), 400, { path: url, fields: ["identifier"] });
    assertErrorBody(await api.put(url, { hmac: "yes" }), 400, { path: url, fields: ["hmac"] });

    // A new environment can be renamed; another organization's cannot be touched.
    const spare = await api.post("/v1/environments", { name: uniqueName("Spare"), color: "#000" });
    assert.equal(spare.statusCode, 201, spare.body);
    const spareUrl = `/v1/environments/${spare.json().data._id}`;
    const renamed = await api.put(spareUrl, { name: "Staging 2", identifier: `${identifier}-staging` });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual(
      [renamed.json().data.name, renamed.json().data.identifier],
      ["Staging 2", `${identifier}-staging`],
    );
    const other = await ctx.tenant();
    assertErrorBody(await ctx.client(other.dev.apiKey).put(spareUrl, { hmac: true }), 404, {
      path: spareUrl,
    });
  });
});
