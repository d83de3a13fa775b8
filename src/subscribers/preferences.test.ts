import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, createWorkflow, nextMillisecond } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";
import { systemClock } from "../clock.ts";
import { decideStep, loadSubscriberPreferences } from "./service.ts";

const ALL_ON = { email: true, sms: true, in_app: true, chat: true, push: true };
const EMAIL_ON = {
  enabled: true,
  channels: { email: true },
  overrides: [{ channel: "email", source: "template" }],
};
const step = (type: string) => ({
  template: { type, content: "Hi", ...(type === "email" ? { subject: "Hi" } : {}) },
});

forEachBackend("subscriber preferences", (ctx) => {
  async function setup() {
    const tenant = await ctx.tenant();
    const { dev } = tenant;
    const subscriber = await createSubscriber(ctx, dev.apiKey, { subscriberId: "u" });
    const api = ctx.client(dev.apiKey);
    // One millisecond apart, so the listing's oldest-first order is certain.
    const mk = async (body: Record<string, unknown>) => {
      const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, body);
      await nextMillisecond();
      return workflow;
    };
    return { ...tenant, subscriber, api, mk };
  }

  test("lists one entry per active workflow: its template, and the channels it uses, with settings over which the subscriber's choices win", async () => {
    const { api, mk } = await setup();
    const plain = await mk({
      active: true,
      name: "Plain",
      tags: ["t"],
      steps: [step("in_app"), step("email")],
    });
    const quiet = await mk({
      active: true,
      name: "Quiet",
      preferenceSettings: { sms: false, push: false },
      steps: [step("sms"), step("push"), step("email"), { ...step("chat"), active: false }],
    });
    const critical = await mk({
      active: true,
      name: "Critical",
      critical: true,
      preferenceSettings: { email: false },
    });
    await mk({ active: false, name: "Draft" });
    const deleted = await mk({ active: true, name: "Deleted" });
    await api.delete(`/v1/workflows/${deleted._id}`);

    const res = await api.get("/v1/subscribers/u/preferences");
    assert.equal(res.statusCode, 200, res.body);
    const rows = res.json().data;
    assert.deepEqual(
      rows.map((r: { template: { name: string } }) => r.template.name),
      ["Plain", "Quiet", "Critical"],
    );
    assert.deepEqual(rows[0], {
      template: { _id: plain._id, name: "Plain", critical: false, triggers: plain.triggers, tags: ["t"] },
      preference: {
        enabled: true,
        channels: { in_app: true, email: true },
        overrides: [
          { channel: "email", source: "template" },
          { channel: "in_app", source: "template" },
        ],
      },
    });
    // Only the channels of its active steps (not chat, whose step is off).
    assert.deepEqual(rows[1].preference, {
      enabled: true,
      channels: { sms: false, push: false, email: true },
      overrides: ["email", "sms", "push"].map((channel) => ({ channel, source: "template" })),
    });
    assert.equal(rows[1].template._id, quiet._id);
    assert.deepEqual(rows[2].template.critical, true);
    assert.deepEqual(rows[2].preference, EMAIL_ON, "critical: always on");
    assert.equal(rows[2].template._id, critical._id);
    // The same list at the template level; @novu/node's includeInactiveChannels changes nothing.
    assert.deepEqual((await api.get("/v1/subscribers/u/preferences/template")).json().data, rows);
    assert.deepEqual(
      (await api.get("/v1/subscribers/u/preferences?includeInactiveChannels=false")).json().data,
      rows,
    );
  });

  test("PATCH a workflow preference: a channel, the whole workflow, both; by _id or identifier", async () => {
    const { api, mk } = await setup();
    const w = await mk({
      active: true,
      name: "News",
      preferenceSettings: { sms: false },
      steps: [step("email"), step("sms")],
    });
    const path = `/v1/subscribers/u/preferences/${w._id}`;
    const one = await api.patch(path, { channel: { type: "email", enabled: false } });
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(one.json().data, {
      template: { _id: w._id, name: "News", critical: false, triggers: w.triggers, tags: [] },
      preference: {
        enabled: true,
        channels: { email: false, sms: false },
        overrides: [
          { channel: "email", source: "subscriber" },
          { channel: "sms", source: "template" },
        ],
      },
    });
    // A channel the workflow does not use is kept, and not listed.
    const unused = await api.patch(path, { channel: { type: "push", enabled: false } });
    assert.deepEqual(unused.json().data.preference.channels, { email: false, sms: false });
    const two = await api.patch(`/v1/subscribers/u/preferences/${w.triggers[0].identifier}`, {
      enabled: false,
      channel: { type: "sms", enabled: true },
    });
    assert.deepEqual(two.json().data.preference, {
      enabled: false,
      channels: { email: false, sms: true },
      overrides: [
        { channel: "email", source: "subscriber" },
        { channel: "sms", source: "subscriber" },
      ],
    });
    const listed = (await api.get("/v1/subscribers/u/preferences")).json().data[0];
    assert.deepEqual(listed, two.json().data);
    // A workflow that is not active (yet) can be set too; it is listed once active.
    const draft = await mk({ active: false, name: "Later" });
    assert.equal(
      (await api.patch(`/v1/subscribers/u/preferences/${draft._id}`, { enabled: false })).statusCode,
      200,
    );
  });

  test("a critical workflow cannot be turned off: 400 saying so, and nothing is stored", async () => {
    const { api, mk, subscriber } = await setup();
    const w = await mk({ active: true, name: "Security alerts", critical: true });
    const path = `/v1/subscribers/u/preferences/${w._id}`;
    for (const body of [{ enabled: false }, { channel: { type: "email", enabled: false } }]) {
      assertErrorBody(await api.patch(path, body), 400, {
        path,
        message:
          /^Workflow "Security alerts" is critical: its notifications are always delivered and cannot be turned off$/,
      });
    }
    const stored = await ctx.store.db
      .selectFrom("subscriber_preferences")
      .select("id")
      .where("subscriber_ref", "=", subscriber._id)
      .execute();
    assert.deepEqual(stored, []);
    assert.equal((await api.patch(path, { enabled: true })).statusCode, 200, "turning it on is fine");
  });

  test("bad preference bodies → 400 naming the field; unknown workflow or subscriber → 404", async () => {
    const { api, mk, dev } = await setup();
    const w = await mk({ active: true });
    const path = `/v1/subscribers/u/preferences/${w._id}`;
    assertErrorBody(await api.patch(path, {}), 400, { path, message: /^Send enabled, channel or both/ });
    for (const [body, fields] of [
      [{ channel: { type: "whatsapp", enabled: false } }, ["channel.type"]],
      [{ channel: { type: "email" } }, ["channel.enabled"]],
      [{ channel: { type: "email", enabled: "no" } }, ["channel.enabled"]],
      [{ enabled: "false" }, ["enabled"]],
      [{ enabled: true, extra: 1 }, ["extra"]],
    ] as const) {
      assertErrorBody(await api.patch(path, body), 400, { path, fields: [...fields] });
    }
    const other = await ctx.tenant();
    const foreign = await createWorkflow(ctx, other.dev.apiKey, other.dev.generalGroupId, { active: true });
    for (const id of [foreign._id, "65f1c0ffee0123456789abcd", "no-such-workflow"]) {
      const p = `/v1/subscribers/u/preferences/${id}`;
      assertErrorBody(await api.patch(p, { enabled: false }), 404, {
        path: p,
        message: /^Workflow .* was not found$/,
      });
    }
    const p = `/v1/subscribers/nobody/preferences/${w._id}`;
    assertErrorBody(await api.patch(p, { enabled: false }), 404, { path: p, message: /^Subscriber nobody/ });
    assert.equal(dev.environmentId.length, 24);
    assert.deepEqual(
      (await api.get("/v1/subscribers/u/preferences")).json().data[0].preference,
      EMAIL_ON,
      "nothing was stored",
    );
  });

  test("global preference: read (all on until set), PATCH enabled and channels, read by level", async () => {
    const { api } = await setup();
    const initial = await api.get("/v1/subscribers/u/preferences/global");
    assert.deepEqual(initial.json(), { data: [{ preference: { enabled: true, channels: ALL_ON } }] });
    const res = await api.patch("/v1/subscribers/u/preferences", {
      preferences: [
        { type: "email", enabled: false },
        { type: "chat", enabled: false },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      data: { preference: { enabled: true, channels: { ...ALL_ON, email: false, chat: false } } },
    });
    const off = await api.patch("/v1/subscribers/u/preferences", {
      enabled: false,
      preferences: [{ type: "chat", enabled: true }],
    });
    assert.deepEqual(off.json().data.preference, { enabled: false, channels: { ...ALL_ON, email: false } });
    assert.deepEqual((await api.get("/v1/subscribers/u/preferences/global")).json().data, [off.json().data]);
    const empty = await api.patch("/v1/subscribers/u/preferences", {});
    assert.deepEqual(empty.json().data, off.json().data, "an empty body changes nothing");
  });

  test("bad global bodies and levels → 400; another environment's subscriber → 404", async () => {
    const { api, prod } = await setup();
    const path = "/v1/subscribers/u/preferences";
    for (const [body, fields] of [
      [{ preferences: [{ type: "pigeon", enabled: false }] }, ["preferences[0].type"]],
      [{ preferences: { type: "email", enabled: false } }, ["preferences"]],
      [{ enabled: 0 }, ["enabled"]],
    ] as const) {
      assertErrorBody(await api.patch(path, body), 400, { path, fields: [...fields] });
    }
    assertErrorBody(await api.get(`${path}/everything`), 400, {
      path: `${path}/everything`,
      fields: ["level"],
    });
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "p" });
    for (const url of ["/v1/subscribers/p/preferences", "/v1/subscribers/p/preferences/global"]) {
      assertErrorBody(await api.get(url), 404, { path: url });
    }
    assertErrorBody(await api.patch("/v1/subscribers/p/preferences", { enabled: false }), 404, {
      path: "/v1/subscribers/p/preferences",
    });
    const prodGlobal = await ctx.client(prod.apiKey).get("/v1/subscribers/p/preferences/global");
    assert.equal(prodGlobal.json().data[0].preference.enabled, true);
  });

  test("the engine's loader reads what was set, and decideStep decides with it", async () => {
    const { api, mk, subscriber, organizationId, dev } = await setup();
    const w = await mk({ active: true, preferenceSettings: { push: false } });
    await api.patch("/v1/subscribers/u/preferences", { preferences: [{ type: "sms", enabled: false }] });
    await api.patch(`/v1/subscribers/u/preferences/${w._id}`, { channel: { type: "push", enabled: true } });
    const tenant = { organizationId, environmentId: dev.environmentId, actorId: "" };
    const deps = { db: ctx.store.db, clock: systemClock };
    const loaded = await loadSubscriberPreferences(deps, tenant, subscriber._id, w._id);
    assert.deepEqual(loaded, {
      global: { enabled: true, channels: { sms: false } },
      workflow: { enabled: true, channels: { push: true } },
    });
    const context = { critical: false, preferenceSettings: w.preferenceSettings, ...loaded };
    assert.deepEqual(
      ["email", "sms", "push", "delay"].map((step) => decideStep(step, context).run),
      [true, false, true, true],
    );
    // Another environment reads nothing of it.
    const other = await ctx.tenant();
    const foreign = {
      organizationId: other.organizationId,
      environmentId: other.dev.environmentId,
      actorId: "",
    };
    assert.deepEqual(await loadSubscriberPreferences(deps, foreign, subscriber._id, w._id), {
      global: undefined,
      workflow: undefined,
    });
  });
});
