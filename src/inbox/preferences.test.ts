// The subscriber's preferences from Novu's current inbox (docs/engine.md, "Subscribers, topics and
// preferences") on both backends, through @novu/js itself: what the inbox lists and sets is what
// the API key's routes and the widget show and what the engine honours, schedule included; a
// session reaches its own subscriber's preferences alone.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend, type TestContext } from "../../test/harness.ts";
import { applicationIdentifierOf, openInbox } from "../../test/inbox-client.ts";
import { poll } from "../../test/poll.ts";
import { ManualClock } from "../clock.ts";
import { applyDefaultSchedule, getInboxGlobalPreference } from "../subscribers/service.ts";

// Monday 1 June 2026, 20:00 UTC: outside 9-to-5 in London's summer time (21:00), inside it in Los Angeles (13:00).
const START = Date.UTC(2026, 5, 1, 20);
const hexId = () => randomBytes(12).toString("hex");

interface JobView {
  type: string;
  status: string;
  executionDetails: { detail: string }[];
}

/** Polls (real time, bounded) until every job of the transaction has settled; returns them. */
function settledJobs(api: Client, transactionId: string): Promise<JobView[]> {
  return poll(
    async () => {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs) as JobView[];
    },
    (jobs) =>
      jobs.length > 0 && jobs.every((j) => !["pending", "queued", "running", "delayed"].includes(j.status)),
    { what: `the jobs of ${transactionId} to settle`, limitMs: 5_000 },
  );
}

const detailsOf = (jobs: JobView[], type: string) =>
  jobs.find((j) => j.type === type)?.executionDetails.map((d) => d.detail) ?? [];

/** A bare request with a session's token, for what the client cannot send. */
function bearer(ctx: TestContext, token: string) {
  const send = (method: "GET" | "PATCH", url: string, body?: unknown) =>
    ctx.app.inject({
      method,
      url: `/v1/inbox${url}`,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  return {
    get: (url: string) => send("GET", url),
    patch: (url: string, body: unknown) => send("PATCH", url, body),
  };
}

const refused = (
  res: Awaited<ReturnType<TestContext["app"]["inject"]>>,
  status: number,
  message: RegExp,
  fields?: string[],
) =>
  assertErrorBody(res, status, {
    path: (res.raw.req.url ?? "").split("?")[0] as string,
    message,
    ...(fields ? { fields } : {}),
  });

forEachBackend(
  "the inbox's preferences (@novu/js)",
  (ctx) => {
    async function setup() {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const mk = async (body: Record<string, unknown>, severity?: string) => {
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Preference workflow"),
          active: true,
          ...(severity ? { severity } : {}),
          ...body,
        });
        // The listing is oldest first: a millisecond apart on the app's clock.
        ctx.clock.advance(1);
        return {
          id: workflow._id as string,
          identifier: workflow.triggers[0].identifier as string,
          name: workflow.name as string,
        };
      };
      const inApp = { template: { type: "in_app", content: "Hello" } };
      const email = { template: { type: "email", subject: "Hi", content: "Hello" } };
      const news = await mk({ tags: ["news"], steps: [inApp, email] }, "high");
      const digest = await mk({ tags: ["digest", "weekly"], steps: [inApp] }, "low");
      const security = await mk({ critical: true, steps: [email] });
      await mk({ active: false, steps: [inApp] });
      const identifier = await applicationIdentifierOf(api);
      const open = async (subscriberId = hexId()) => {
        const inbox = await openInbox(ctx, {
          applicationIdentifier: identifier,
          subscriber: { subscriberId },
          useCache: false,
        });
        assert.equal(inbox.error, undefined, String(inbox.error));
        return { ...inbox, subscriberId, token: inbox.session?.token as string };
      };
      const trigger = async (workflow: { identifier: string }, to: string) => {
        const transactionId = hexId();
        const res = await api.post("/v1/events/trigger", { name: workflow.identifier, to, transactionId });
        assert.equal(res.statusCode, 201, res.body);
        return settledJobs(api, transactionId);
      };
      return { tenant, api, news, digest, security, identifier, open, trigger };
    }

    test("preferences.list: the global preference, then the active non-critical workflows oldest first, each with the channels it uses", async () => {
      const { news, digest, open } = await setup();
      const inbox = await open();
      try {
        const { data, error } = await inbox.novu.preferences.list();
        assert.equal(error, undefined);
        const shown = (data ?? []).map((p) => ({
          level: p.level,
          enabled: p.enabled,
          channels: p.channels,
          workflow: p.workflow,
        }));
        assert.deepEqual(shown, [
          { level: "global", enabled: true, channels: { email: true, in_app: true }, workflow: undefined },
          {
            level: "template",
            enabled: true,
            channels: { in_app: true, email: true },
            workflow: {
              id: news.id,
              identifier: news.identifier,
              name: news.name,
              critical: false,
              tags: ["news"],
              severity: "high",
            },
          },
          {
            level: "template",
            enabled: true,
            channels: { in_app: true },
            workflow: {
              id: digest.id,
              identifier: digest.identifier,
              name: digest.name,
              critical: false,
              tags: ["digest", "weekly"],
              severity: "low",
            },
          },
        ]);
        // No schedule yet: the client's Schedule is empty.
        assert.equal(data?.[0]?.schedule.isEnabled, undefined);
      } finally {
        await inbox.close();
      }
    });

    test("preferences.list filters by tags, severity and criticality (default nonCritical)", async () => {
      const { news, digest, security, open } = await setup();
      const inbox = await open();
      try {
        const ids = async (args: Parameters<typeof inbox.novu.preferences.list>[0]) => {
          const { data } = await inbox.novu.preferences.list(args);
          assert.equal(data?.[0]?.level, "global", "the global preference always comes first");
          return (data ?? []).slice(1).map((p) => p.workflow?.id);
        };
        assert.deepEqual(await ids({ tags: ["weekly"] }), [digest.id]);
        assert.deepEqual(await ids({ tags: ["news", "weekly"] }), [news.id, digest.id]);
        assert.deepEqual(await ids({ tags: ["nothing"] }), []);
        assert.deepEqual(await ids({ severity: "high" as never }), [news.id]);
        assert.deepEqual(await ids({ severity: ["high", "low"] as never }), [news.id, digest.id]);
        assert.deepEqual(await ids({ criticality: "critical" as never }), [security.id]);
        assert.deepEqual(await ids({ criticality: "all" as never }), [news.id, digest.id, security.id]);
        assert.deepEqual(await ids({ criticality: "all" as never, tags: ["news"] }), [news.id]);
      } finally {
        await inbox.close();
      }
    });

    test("a workflow's channel turned off from the inbox: the answer, the API key's view, the widget's, and no in-app message", async () => {
      const { api, news, open, trigger } = await setup();
      const inbox = await open();
      try {
        const { data } = await inbox.novu.preferences.list();
        const newsPreference = data?.find((p) => p.workflow?.id === news.id);
        assert.ok(newsPreference);
        const updated = await newsPreference.update({ channels: { in_app: false } });
        assert.equal(updated.error, undefined, String(updated.error));
        assert.deepEqual(updated.data?.channels, { in_app: false, email: true });
        assert.equal(updated.data?.level, "template");
        assert.equal(updated.data?.workflow?.id, news.id);

        // The same preference, as the API key reads it: the workflow's own channels (in-app and
        // email), each with where its value comes from.
        const v1 = (await api.get(`/v1/subscribers/${inbox.subscriberId}/preferences`)).json().data;
        const row = v1.find((r: { template: { _id: string } }) => r.template._id === news.id);
        assert.deepEqual(row.preference, {
          enabled: true,
          channels: { email: true, in_app: false },
          overrides: [
            { channel: "email", source: "template" },
            { channel: "in_app", source: "subscriber" },
          ],
        });
        // And as the widget reads it, with the same session token.
        const widget = await ctx.app.inject({
          method: "GET",
          url: "/v1/widgets/preferences",
          headers: { authorization: `Bearer ${inbox.token}` },
        });
        assert.equal(widget.statusCode, 200, widget.body);
        const shown = widget
          .json()
          .data.find((r: { template: { _id: string } }) => r.template._id === news.id);
        assert.equal(shown.preference.channels.in_app, false);

        // The engine: no in-app message; the email step is decided on as before.
        const jobs = await trigger(news, inbox.subscriberId);
        assert.equal(jobs.find((j) => j.type === "in_app")?.status, "skipped");
        assert.match(detailsOf(jobs, "in_app").join(), /turned in_app off for this workflow/);
        assert.doesNotMatch(detailsOf(jobs, "email").join(), /turned|schedule/);

        // Turning the whole workflow off by identifier: both steps skip.
        const off = await bearer(ctx, inbox.token).patch(`/preferences/${news.identifier}`, {
          enabled: false,
        });
        assert.equal(off.statusCode, 200, off.body);
        assert.equal(off.json().data.enabled, false);
        const after = await trigger(news, inbox.subscriberId);
        assert.deepEqual(
          after.map((j) => j.status),
          ["skipped", "skipped"],
        );
      } finally {
        await inbox.close();
      }
    });

    test("the global channels from the inbox: every workflow's email skips, the API key's global view agrees", async () => {
      const { api, news, open, trigger } = await setup();
      const inbox = await open();
      try {
        const { data } = await inbox.novu.preferences.list();
        const global = data?.[0];
        assert.equal(global?.level, "global");
        const updated = await global?.update({ channels: { email: false } });
        assert.equal(updated?.error, undefined, String(updated?.error));
        assert.deepEqual(updated?.data?.channels, { email: false, in_app: true });
        assert.equal(updated?.data?.level, "global");

        const v1 = await api.get(`/v1/subscribers/${inbox.subscriberId}/preferences/global`);
        assert.deepEqual(v1.json().data[0].preference, {
          enabled: true,
          channels: { email: false, sms: true, in_app: true, chat: true, push: true },
        });
        const fetched = await bearer(ctx, inbox.token).get("/preferences/global");
        assert.deepEqual(fetched.json().data, {
          level: "global",
          enabled: true,
          channels: { email: false, in_app: true },
        });

        const jobs = await trigger(news, inbox.subscriberId);
        assert.equal(jobs.find((j) => j.type === "email")?.status, "skipped");
        assert.match(detailsOf(jobs, "email").join(), /turned the email channel off/);
        assert.equal(jobs.find((j) => j.type === "in_app")?.status, "completed");
      } finally {
        await inbox.close();
      }
    });

    test("preferences.bulkUpdate: several workflows at once; a critical workflow cannot be turned off; an unknown one is a 404", async () => {
      const { news, digest, security, open } = await setup();
      const inbox = await open();
      try {
        const { data, error } = await inbox.novu.preferences.bulkUpdate([
          { workflowId: news.id, channels: { email: false } },
          { workflowId: digest.identifier, channels: { in_app: false } },
        ]);
        assert.equal(error, undefined, String(error));
        assert.deepEqual(
          data?.map((p) => [p.workflow?.id, p.channels]),
          [
            [news.id, { in_app: true, email: false }],
            [digest.id, { in_app: false }],
          ],
        );
        const listed = await inbox.novu.preferences.list();
        assert.deepEqual(
          listed.data?.slice(1).map((p) => p.channels),
          [{ in_app: true, email: false }, { in_app: false }],
        );

        const session = bearer(ctx, inbox.token);
        refused(
          await session.patch("/preferences/bulk", {
            preferences: [{ workflowId: security.id, email: false }],
          }),
          400,
          /is critical/,
        );
        refused(
          await session.patch(`/preferences/${security.id}`, { email: false }),
          400,
          /is critical: its notifications are always delivered/,
        );
        refused(
          await session.patch("/preferences/bulk", {
            preferences: [
              { workflowId: news.id, email: true },
              { workflowId: "no-such-workflow", email: false },
            ],
          }),
          404,
          /^Workflow no-such-workflow was not found$/,
        );
        // Nothing of a refused bulk is written.
        const again = await inbox.novu.preferences.list();
        assert.deepEqual(again.data?.[1]?.channels, { in_app: true, email: false });
      } finally {
        await inbox.close();
      }
    });

    test("the schedule from the inbox: kept with the global preference, shown to the API key, and honoured by the engine on the subscriber's clocks", async () => {
      const { api, news, open, trigger } = await setup();
      const inbox = await open();
      try {
        const nineToFive = { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] };
        const weeklySchedule = {
          monday: nineToFive,
          tuesday: nineToFive,
          wednesday: nineToFive,
          thursday: nineToFive,
          friday: nineToFive,
        };
        const updated = await inbox.novu.preferences.schedule.update({ isEnabled: true, weeklySchedule });
        assert.equal(updated.error, undefined, String(updated.error));
        assert.equal(updated.data?.isEnabled, true);
        assert.deepEqual(updated.data?.weeklySchedule, weeklySchedule);

        const got = await inbox.novu.preferences.schedule.get();
        assert.deepEqual(
          { isEnabled: got.data?.isEnabled, weeklySchedule: got.data?.weeklySchedule },
          {
            isEnabled: true,
            weeklySchedule,
          },
        );
        const listed = await inbox.novu.preferences.list();
        assert.deepEqual(listed.data?.[0]?.schedule.weeklySchedule, weeklySchedule);
        const v1 = await api.get(`/v1/subscribers/${inbox.subscriberId}/preferences/global`);
        assert.equal(v1.statusCode, 200, v1.body);
        assert.deepEqual(v1.json().data[0].schedule, { isEnabled: true, weeklySchedule });
        // A change of the global channels through the API key keeps the schedule.
        const sms = await api.patch(`/v1/subscribers/${inbox.subscriberId}/preferences`, {
          preferences: [{ type: "sms", enabled: false }],
        });
        assert.equal(sms.statusCode, 200, sms.body);
        assert.deepEqual(sms.json().data.schedule, { isEnabled: true, weeklySchedule });

        // 20:00 UTC, no timezone: outside. The email step is skipped, the in-app message is delivered.
        const outside = await trigger(news, inbox.subscriberId);
        assert.equal(outside.find((j) => j.type === "email")?.status, "skipped");
        assert.match(detailsOf(outside, "email").join(), /outside the subscriber's schedule/);
        assert.equal(outside.find((j) => j.type === "in_app")?.status, "completed");

        // The same moment is 13:00 in Los Angeles: inside, the email step goes on to delivery.
        const moved = await api.put(`/v1/subscribers/${inbox.subscriberId}`, {
          timezone: "America/Los_Angeles",
        });
        assert.equal(moved.statusCode, 200, moved.body);
        assert.equal(moved.json().data.timezone, "America/Los_Angeles");
        const inside = await trigger(news, inbox.subscriberId);
        assert.doesNotMatch(detailsOf(inside, "email").join(), /schedule/);
        assert.match(detailsOf(inside, "email").join(), /No active email integration/);

        // Turned off (its hours kept): nothing is held back, and the hours come back when it is on again.
        const off = await inbox.novu.preferences.schedule.update({ isEnabled: false });
        assert.equal(off.data?.isEnabled, false);
        assert.deepEqual(off.data?.weeklySchedule, weeklySchedule);
        await api.put(`/v1/subscribers/${inbox.subscriberId}`, { timezone: "" });
        const unscheduled = await trigger(news, inbox.subscriberId);
        assert.doesNotMatch(detailsOf(unscheduled, "email").join(), /schedule/);

        // A time written loosely is kept as the inbox writes it.
        const loose = await bearer(ctx, inbox.token).patch("/preferences", {
          schedule: {
            isEnabled: true,
            weeklySchedule: { sunday: { isEnabled: true, hours: [{ start: "9:00am", end: "5:30 pm" }] } },
          },
        });
        assert.equal(loose.statusCode, 200, loose.body);
        assert.deepEqual(loose.json().data.schedule, {
          isEnabled: true,
          weeklySchedule: { sunday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:30 PM" }] } },
        });
      } finally {
        await inbox.close();
      }
    });

    test("a session's default schedule applies to a subscriber without one, never over its own", async () => {
      const { tenant, open } = await setup();
      const deps = { db: ctx.store.db, clock: ctx.clock };
      const who = {
        organizationId: tenant.organizationId,
        environmentId: tenant.dev.environmentId,
        actorId: "",
      };
      const fresh = await open();
      const chosen = await open();
      try {
        const mornings = { monday: { isEnabled: true, hours: [{ start: "8:00 am", end: "12:00 PM" }] } };
        await chosen.novu.preferences.schedule.update({ isEnabled: false, weeklySchedule: mornings });
        const page = {
          isEnabled: true,
          weeklySchedule: { friday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] } },
        };
        await applyDefaultSchedule(deps, who, fresh.subscriberId, page);
        await applyDefaultSchedule(deps, who, chosen.subscriberId, page);
        assert.deepEqual((await getInboxGlobalPreference(deps, who, fresh.subscriberId)).schedule, page);
        assert.deepEqual((await getInboxGlobalPreference(deps, who, chosen.subscriberId)).schedule, {
          isEnabled: false,
          weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "08:00 AM", end: "12:00 PM" }] } },
        });
        await assert.rejects(
          applyDefaultSchedule(deps, who, fresh.subscriberId, {
            isEnabled: true,
            weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "8", end: "9" }] } },
          }),
          /defaultSchedule\.weeklySchedule\.monday\.hours\[0\]\.start must be a time/,
        );
      } finally {
        await fresh.close();
        await chosen.close();
      }
    });

    test("a session reaches its own subscriber's preferences alone, and its environment's workflows alone", async () => {
      const { api, news, open } = await setup();
      const ada = await open();
      const bob = await open();
      try {
        const adaNews = (await ada.novu.preferences.list()).data?.find((p) => p.workflow?.id === news.id);
        await adaNews?.update({ channels: { email: false } });
        await ada.novu.preferences.schedule.update({
          isEnabled: true,
          weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "10:00 AM" }] } },
        });
        // Bob sees his own defaults, not Ada's choices.
        const bobs = await bob.novu.preferences.list();
        assert.deepEqual(bobs.data?.find((p) => p.workflow?.id === news.id)?.channels, {
          in_app: true,
          email: true,
        });
        assert.equal(bobs.data?.[0]?.schedule.isEnabled, undefined);
        assert.deepEqual(
          (await api.get(`/v1/subscribers/${bob.subscriberId}/preferences/global`)).json().data[0].preference
            .channels.email,
          true,
        );
        // A workflow of another environment (or organization) is not there for Bob's session.
        const other = await setup();
        const foreign = bearer(ctx, bob.token);
        refused(await foreign.patch(`/preferences/${other.news.id}`, { email: false }), 404, /was not found/);
        refused(
          await foreign.patch("/preferences/bulk", {
            preferences: [{ workflowId: other.news.identifier, email: false }],
          }),
          404,
          /was not found/,
        );
        // Another environment's session sees its own workflows only.
        const stranger = await other.open();
        try {
          const listed = await stranger.novu.preferences.list({ criticality: "all" as never });
          assert.ok((listed.data ?? []).slice(1).every((p) => p.workflow?.id !== news.id));
        } finally {
          await stranger.close();
        }
        // Without a session nothing is read.
        const anonymous = await ctx.app.inject({ method: "GET", url: "/v1/inbox/preferences" });
        assert.equal(anonymous.statusCode, 401);
      } finally {
        await ada.close();
        await bob.close();
      }
    });

    test("bad input is a 400 in the one error body, and changes nothing", async () => {
      const { news, open } = await setup();
      const inbox = await open();
      try {
        const session = bearer(ctx, inbox.token);
        const schedule = (weeklySchedule: unknown, isEnabled: unknown = true) => ({
          schedule: { isEnabled, weeklySchedule },
        });
        const cases: [string, "GET" | "PATCH", string, unknown, RegExp, string[]][] = [
          [
            "a criticality that is not one",
            "GET",
            "/preferences?criticality=urgent",
            undefined,
            /criticality/,
            ["criticality"],
          ],
          [
            "a severity that is not one",
            "GET",
            "/preferences?severity=extreme",
            undefined,
            /severity/,
            ["severity"],
          ],
          [
            "a channel that is not a boolean",
            "PATCH",
            `/preferences/${news.id}`,
            { email: "no" },
            /email/,
            ["email"],
          ],
          ["a channel that is not one", "PATCH", "/preferences", { fax: true }, /fax/, ["fax"]],
          [
            "a 24-hour time",
            "PATCH",
            "/preferences",
            schedule({ monday: { isEnabled: true, hours: [{ start: "17:00", end: "05:00 PM" }] } }),
            /^schedule\.weeklySchedule\.monday\.hours\[0\]\.start must be a time such as 09:00 AM$/,
            ["schedule.weeklySchedule.monday.hours[0].start"],
          ],
          [
            "a schedule without isEnabled",
            "PATCH",
            "/preferences",
            { schedule: { weeklySchedule: {} } },
            /isEnabled/,
            ["schedule.isEnabled"],
          ],
          [
            "a day that is not a weekday",
            "PATCH",
            "/preferences",
            schedule({ someday: { isEnabled: true } }),
            /someday/,
            ["schedule.weeklySchedule.someday"],
          ],
          [
            "an enabled schedule without days",
            "PATCH",
            "/preferences",
            schedule({}),
            /at least one day/,
            ["schedule.weeklySchedule"],
          ],
          [
            "an empty bulk",
            "PATCH",
            "/preferences/bulk",
            { preferences: [] },
            /^preferences must name at least one workflow$/,
            ["preferences"],
          ],
          [
            "a bulk of 101",
            "PATCH",
            "/preferences/bulk",
            { preferences: Array.from({ length: 101 }, () => ({ workflowId: news.id, email: true })) },
            /preferences/,
            ["preferences"],
          ],
          [
            "a workflow id with a slash",
            "PATCH",
            "/preferences/a%2Fb",
            { email: true },
            /workflowIdOrIdentifier/,
            ["workflowIdOrIdentifier"],
          ],
        ];
        for (const [name, method, url, body, message, fields] of cases) {
          const res = method === "GET" ? await session.get(url) : await session.patch(url, body);
          assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
          refused(res, 400, message, fields);
        }
        const listed = await inbox.novu.preferences.list();
        assert.deepEqual(listed.data?.[0]?.channels, { email: true, in_app: true });
        assert.equal(listed.data?.[0]?.schedule.isEnabled, undefined);
      } finally {
        await inbox.close();
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
