// The last of Novu's v1 routes an API key reaches, answered as Novu answers them from Tidings' own
// state, on both backends and through @novu/node where it has the call: `GET /v1/users/me` (the
// organization's owner, as its member record has it), the in-app onboarding's status, the built-in
// providers' limit of a channel (Tidings has none), and the inbound-parse MX status (Tidings receives
// no email).
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import { Novu as LegacyNovu } from "@novu/node";
import { assertErrorBody } from "./error-body.ts";
import { forEachBackend } from "./harness.ts";

forEachBackend("Novu's v1 status routes: users/me, in-app status, channel limits, MX status", (ctx) => {
  let backendUrl = "";
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    backendUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  });

  test("users/me: the organization's owner, the user its member record names, since the organization was made; each organization its own", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const me = await api.get("/v1/users/me");
    assert.equal(me.statusCode, 200, me.body);
    const organization = (await api.get("/v1/organizations/me")).json().data;
    const [member] = (await api.get("/v1/organizations/members")).json().data;
    assert.deepEqual(me.json(), {
      data: { ...member.user, profilePicture: null, createdAt: organization.createdAt },
    });
    assert.equal(me.json().data._id, member._userId);
    assert.equal(me.json().data._id, organization._id);
    // Production's key acts for the same organization: the same user.
    assert.deepEqual((await ctx.client(prod.apiKey).get("/v1/users/me")).json(), me.json());
    // Another organization's key: its own owner.
    const other = await ctx.tenant();
    const theirs = (await ctx.client(other.dev.apiKey).get("/v1/users/me")).json().data;
    assert.equal(theirs._id, other.organizationId);
    assert.notEqual(theirs._id, me.json().data._id);
  });

  test("in-app status: active once an on-boarding subscriber of the key's environment is online (Novu's rule), any case; @novu/node's getInAppStatus", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const legacy = new LegacyNovu(dev.apiKey, { backendUrl });
    const status = async (client = api) => {
      const res = await client.get("/v1/integrations/in-app/status");
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const online = async (subscriberId: string, isOnline: boolean) => {
      const res = await api.patch(`/v1/subscribers/${subscriberId}/online-status`, { isOnline });
      assert.equal(res.statusCode, 200, res.body);
    };
    const make = async (subscriberId: string) => {
      const res = await api.post("/v1/subscribers", { subscriberId });
      assert.equal(res.statusCode, 201, res.body);
    };

    assert.deepEqual(await status(), { data: { active: false } });
    // Online, but not the onboarding's subscriber; the onboarding's, but offline: not active.
    await make("ada");
    await online("ada", true);
    await make("On-Boarding-Subscriber-42");
    assert.deepEqual(await status(), { data: { active: false } });
    await online("On-Boarding-Subscriber-42", true);
    assert.deepEqual(await status(), { data: { active: true } });
    assert.deepEqual((await legacy.integrations.getInAppStatus()).data, { data: { active: true } });
    // Another environment's subscribers are not this one's.
    assert.deepEqual(await status(ctx.client(prod.apiKey)), { data: { active: false } });
    await online("On-Boarding-Subscriber-42", false);
    assert.deepEqual(await status(), { data: { active: false } });
  });

  test("channel limits: Novu's answer without built-in providers, {limit: 0, count: 0}, for each channel; another channel is a 400", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    for (const channel of ["in_app", "email", "sms", "chat", "push"]) {
      const res = await api.get(`/v1/integrations/${channel}/limit`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: { limit: 0, count: 0 } });
    }
    for (const channel of ["fax", "EMAIL", "in-app", "%20"]) {
      const res = await api.get(`/v1/integrations/${channel}/limit`);
      assertErrorBody(res, 400, { path: `/v1/integrations/${channel}/limit`, fields: ["channelType"] });
    }
  });

  test("inbound-parse MX status: never configured, for Tidings receives no email; @novu/node's getMxStatus", async () => {
    const { dev, prod } = await ctx.tenant();
    for (const key of [dev.apiKey, prod.apiKey]) {
      const res = await ctx.client(key).get("/v1/inbound-parse/mx/status");
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: { mxRecordConfigured: false } });
    }
    const legacy = new LegacyNovu(dev.apiKey, { backendUrl });
    assert.deepEqual((await legacy.inboundParse.getMxStatus()).data, { data: { mxRecordConfigured: false } });
  });
});
