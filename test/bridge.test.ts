import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { Client as NovuClient, workflow } from "@novu/framework";
import { serve } from "@novu/framework/express";
import express from "express";
import { bridgeSignature } from "../src/bridge-client.ts";
import { ManualClock } from "../src/clock.ts";
import { type Client, forEachBackend, testConfig } from "./harness.ts";
import { poll } from "./poll.ts";
import { drain } from "./queue-helpers.ts";
import { type SmtpSink, startSmtpSink, startWebhookSink, type WebhookSink } from "./sinks.ts";

// Workflows defined in code (docs/bridge.md): a real @novu/framework app, served by its express
// adapter on a local port with strictAuthentication and the environment's secret key, synced into
// Tidings and run by its engine through the bridge. One app and one tenant per backend.

const START = Date.UTC(2026, 5, 1, 9);
const hexId = () => randomBytes(12).toString("hex");
const FINAL = ["completed", "failed", "canceled", "merged", "skipped"];
const MONDAYS_9 = "0 9 * * 1";

/** The first Monday 09:00 UTC strictly after `after` (epoch ms), computed without a cron library. */
function nextMonday9(after: number): number {
  const day = new Date(after);
  let at = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 9);
  while (new Date(at).getUTCDay() !== 1 || at <= after) at += 86_400_000;
  return at;
}

interface JobView {
  type: string;
  status: string;
  executionDetails: { detail: string; status: string; raw?: string }[];
}

/** The code-first app's workflows, as a team would write them. */
function workflows() {
  const welcome = workflow(
    "welcome",
    async ({ step, payload }) => {
      await step.inApp(
        "hello",
        async (controls) => ({
          subject: `${controls.greeting}, ${payload.name}`,
          body: `Welcome aboard, ${payload.name}`,
          redirect: { url: "https://example.com/start" },
        }),
        {
          controlSchema: {
            type: "object",
            properties: { greeting: { type: "string", default: "Hello" } },
            additionalProperties: false,
          } as const,
          skip: () => payload.quiet === true,
        },
      );
    },
    {
      name: "Welcome",
      tags: ["onboarding"],
      payloadSchema: {
        type: "object",
        properties: { name: { type: "string" }, quiet: { type: "boolean" } },
        required: ["name"],
        additionalProperties: false,
      } as const,
    },
  );
  const waitThenNotify = workflow("wait-then-notify", async ({ step }) => {
    const waited = await step.delay("wait", async () => ({ type: "regular", amount: 2, unit: "seconds" }));
    await step.inApp("after-wait", async () => ({ body: `Waited ${waited.duration} ms` }));
  });
  const receipt = workflow(
    "receipt",
    async ({ step, payload, subscriber }) => {
      const computed = await step.custom("compute", async () => ({ code: `R-${payload.order}` }), {
        outputSchema: {
          type: "object",
          properties: { code: { type: "string" } },
          required: ["code"],
          additionalProperties: false,
        } as const,
      });
      await step.email("send", async () => ({
        subject: `Receipt ${computed.code}`,
        body: `<p>Thanks, ${subscriber.firstName}: order ${computed.code}</p>`,
      }));
      await step.chat("team", async () => ({ body: `Order ${computed.code} is paid` }));
    },
    {
      payloadSchema: {
        type: "object",
        properties: { order: { type: "number" } },
        required: ["order"],
      } as const,
    },
  );
  const digestEmail = workflow("digest-email", async ({ step }) => {
    const { events } = await step.digest("collect", async () => ({ amount: 10, unit: "seconds" }));
    await step.email("summary", async () => ({
      subject: `${events.length} updates`,
      body: `<p>Items: ${events.map((e) => String(e.payload.item)).join(", ")}</p>`,
    }));
  });
  const limited = workflow("limited", async ({ step }) => {
    await step.throttle("cap", async () => ({ type: "fixed", amount: 1, unit: "minutes", threshold: 2 }));
    await step.inApp("ping", async () => ({ body: "Ping" }));
  });
  // Timed by a cron (UTC): Mondays at 09:00, or the payload's expression to show a bad one refused.
  const cronWait = workflow(
    "cron-wait",
    async ({ step, payload }) => {
      const waited = await step.delay("until-monday", async () => ({
        type: "timed",
        cron: typeof payload.cron === "string" ? payload.cron : MONDAYS_9,
      }));
      await step.inApp("monday", async () => ({ body: `Waited ${waited.duration} ms` }));
    },
    {
      payloadSchema: {
        type: "object",
        properties: { cron: { type: "string" } },
        additionalProperties: false,
      } as const,
    },
  );
  const cronDigest = workflow("cron-digest", async ({ step }) => {
    const { events } = await step.digest("weekly", async () => ({ type: "timed", cron: MONDAYS_9 }));
    await step.email("weekly-summary", async () => ({
      subject: `${events.length} this week`,
      body: `<p>Week: ${events.map((e) => String(e.payload.item)).join(", ")}</p>`,
    }));
  });
  return [welcome, waitThenNotify, receipt, digestEmail, limited, cronWait, cronDigest];
}

interface BridgeApp {
  url: string;
  smallUrl: string;
  /** The next this many execute calls answer 503. */
  failNext: number;
  executeCalls: number;
  close(): Promise<void>;
}

async function startBridgeApp(secretKey: string): Promise<BridgeApp> {
  const all = workflows();
  const client = () => new NovuClient({ secretKey, strictAuthentication: true, verbose: false });
  const app = express();
  app.use(express.json());
  const state = { failNext: 0, executeCalls: 0 };
  app.use((req, res, next) => {
    if (req.query.action !== "execute") return next();
    state.executeCalls++;
    if (state.failNext > 0) {
      state.failNext--;
      res.status(503).json({ message: "down for maintenance" });
      return;
    }
    next();
  });
  app.use("/api/novu", serve({ client: client(), workflows: all }));
  // The same app after a release that dropped every workflow but the first.
  app.use("/api/novu-small", serve({ client: client(), workflows: all.slice(0, 1) }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/api/novu`,
    smallUrl: `http://127.0.0.1:${port}/api/novu-small`,
    get failNext() {
      return state.failNext;
    },
    set failNext(n: number) {
      state.failNext = n;
    },
    get executeCalls() {
      return state.executeCalls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

forEachBackend<ManualClock>(
  "workflows defined in code, through the bridge",
  (ctx) => {
    let api: Client;
    let apiKey: string;
    let bridge: BridgeApp;
    let sink: SmtpSink;
    let hooks: WebhookSink;
    let production: string;

    before(async () => {
      const tenant = await ctx.tenant();
      apiKey = tenant.dev.apiKey;
      production = tenant.prod.environmentId;
      api = ctx.client(apiKey);
      bridge = await startBridgeApp(apiKey);
      sink = await startSmtpSink();
      const res = await api.post("/v1/integrations", {
        active: true,
        providerId: "nodemailer",
        channel: "email",
        credentials: {
          host: "127.0.0.1",
          port: String(sink.port),
          secure: false,
          ignoreTls: true,
          from: "team@example.com",
          senderName: "Team",
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      hooks = await startWebhookSink();
      const chat = await api.post("/v1/integrations", { active: true, providerId: "slack", channel: "chat" });
      assert.equal(chat.statusCode, 201, chat.body);
    });
    after(async () => {
      await bridge?.close();
      await sink?.close();
      await hooks?.close();
    });

    async function sync(url = bridge.url) {
      return api.post("/v1/bridge/sync?source=cli", { bridgeUrl: url });
    }

    async function trigger(name: string, payload: Record<string, unknown>, to: unknown = hexId()) {
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", { name, to, payload, transactionId });
      assert.equal(res.statusCode, 201, res.body);
      return transactionId;
    }

    async function jobsOf(transactionId: string): Promise<JobView[]> {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs);
    }

    const finished = (transactionId: string) =>
      poll(
        () => jobsOf(transactionId),
        (jobs) => jobs.length > 0 && jobs.every((j) => FINAL.includes(j.status)),
        { what: `the jobs of ${transactionId} to be final` },
      );

    async function messagesOf(transactionId: string) {
      const res = await api.get(`/v1/messages?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as {
        content: string;
        subject?: string;
        channel: string;
        cta: { data: { url?: string } };
      }[];
    }

    test("the framework refuses unsigned and wrongly signed calls, and accepts ours", async () => {
      const discover = `${bridge.url}?action=discover`;
      const unsigned = await fetch(discover);
      assert.equal(unsigned.status, 401);
      assert.equal(((await unsigned.json()) as { code: string }).code, "SignatureNotFoundError");
      const wrong = await fetch(discover, {
        headers: { "novu-signature": bridgeSignature("not-the-key", {}, Date.now()) },
      });
      assert.equal(wrong.status, 401);
      assert.equal(((await wrong.json()) as { code: string }).code, "SignatureMismatchError");
      const ours = await fetch(discover, {
        headers: { "novu-signature": bridgeSignature(apiKey, {}, Date.now()) },
      });
      assert.equal(ours.status, 200);
      const body = (await ours.json()) as { workflows: { workflowId: string }[] };
      assert.equal(body.workflows.length, 7);
    });

    test("sync: discover stores the code workflows (steps read-only), diff and removal at the next sync", async () => {
      const unreachable = await api.post("/v1/bridge/sync", { bridgeUrl: "http://127.0.0.1:9/api/novu" });
      assert.equal(unreachable.statusCode, 400, unreachable.body);
      assert.match(unreachable.json().message, /^Bridge discover failed: the bridge could not be reached/);
      const internal = await api.post("/v1/bridge/sync", { bridgeUrl: "http://169.254.169.254/latest" });
      assert.equal(internal.statusCode, 400, internal.body);
      assert.match(internal.json().message, /bridgeUrl must not name an internal address/);

      const res = await sync();
      assert.equal(res.statusCode, 201, res.body);
      const stored = res.json().data as {
        _id: string;
        name: string;
        origin: string;
        tags: string[];
        triggers: { identifier: string }[];
        steps: { template: { type: string }; code: { type: string } }[];
      }[];
      assert.deepEqual(stored.map((w) => w.triggers[0]?.identifier).sort(), [
        "cron-digest",
        "cron-wait",
        "digest-email",
        "limited",
        "receipt",
        "wait-then-notify",
        "welcome",
      ]);
      const welcome = stored.find((w) => w.triggers[0]?.identifier === "welcome");
      assert.equal(welcome?.origin, "external");
      assert.equal(welcome?.name, "Welcome");
      assert.deepEqual(welcome?.tags, ["onboarding"]);
      const receipt = stored.find((w) => w.triggers[0]?.identifier === "receipt");
      assert.deepEqual(
        receipt?.steps.map((s) => [s.template.type, s.code.type]),
        [
          ["custom", "custom"],
          ["email", "email"],
          ["chat", "chat"],
        ],
      );
      // In the workflow list like any workflow; its steps are the app's.
      const listed = await api.get("/v1/workflows?limit=50");
      assert.equal(listed.json().totalCount, 7);
      const edit = await api.put(`/v1/workflows/${welcome?._id}`, { steps: [] });
      assert.equal(edit.statusCode, 400, edit.body);
      assert.match(edit.json().message, /defined in code/);
      const off = await api.put(`/v1/workflows/${welcome?._id}/status`, { active: false });
      assert.equal(off.statusCode, 200, off.body);
      const on = await api.put(`/v1/workflows/${welcome?._id}/status`, { active: true });
      assert.equal(on.statusCode, 200, on.body);

      const diff = await api.post("/v1/bridge/diff", { bridgeUrl: bridge.smallUrl });
      assert.equal(diff.statusCode, 201, diff.body);
      assert.deepEqual(diff.json().data.removed.sort(), [
        "cron-digest",
        "cron-wait",
        "digest-email",
        "limited",
        "receipt",
        "wait-then-notify",
      ]);
      assert.deepEqual(diff.json().data.unchanged, ["welcome"]);
      const smaller = await sync(bridge.smallUrl);
      assert.equal(smaller.statusCode, 201, smaller.body);
      assert.equal(smaller.json().data.length, 1);
      assert.equal(smaller.json().data[0]._id, welcome?._id, "a workflow still listed keeps its id");
      assert.equal((await api.get("/v1/workflows?limit=50")).json().totalCount, 1);
      const back = await sync();
      assert.equal(back.statusCode, 201, back.body);
      assert.equal(back.json().data.length, 7);
      // Production gets them from its own app's bridge, not by a publish.
      const publish = await api.post(`/v2/environments/${production}/diff`, {});
      assert.equal(publish.statusCode, 200, publish.body);
      assert.deepEqual(publish.json().data.resources, []);
    });

    test("trigger: a payload that breaks the payload schema is refused naming the field", async () => {
      const missing = await api.post("/v1/events/trigger", { name: "welcome", to: hexId(), payload: {} });
      assert.equal(missing.statusCode, 400, missing.body);
      assert.match(missing.json().message, /^payload\.name is required/);
      const wrong = await api.post("/v1/events/trigger", {
        name: "welcome",
        to: hexId(),
        payload: { name: 42, quiet: "no" },
      });
      assert.equal(wrong.statusCode, 400, wrong.body);
      assert.deepEqual(
        wrong.json().errors.map((e: { field: string }) => e.field),
        ["payload.name", "payload.quiet"],
      );
    });

    test("in-app: content rendered by the bridge with the stored control values; skip honoured", async () => {
      const tx = await trigger("welcome", { name: "Ada" });
      const [job] = await finished(tx);
      assert.equal(job?.status, "completed", JSON.stringify(job));
      const [message] = await messagesOf(tx);
      assert.equal(message?.subject, "Hello, Ada");
      assert.equal(message?.content, "Welcome aboard, Ada");
      assert.equal(message?.cta.data.url, "https://example.com/start");

      const refused = await api.put("/v1/bridge/controls/welcome/hello", { controls: { greeting: 5 } });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.match(
        refused.json().message,
        /^controls\.greeting must be string \(the step's control schema\)/,
      );
      const controls = await api.put("/v1/bridge/controls/welcome/hello", { controls: { greeting: "Hi" } });
      assert.equal(controls.statusCode, 200, controls.body);
      const v2 = await api.get("/v2/workflows/welcome");
      assert.equal(v2.statusCode, 200, v2.body);
      assert.equal(v2.json().data.origin, "external");
      assert.deepEqual(v2.json().data.steps[0].controlValues, { greeting: "Hi" });
      const again = await trigger("welcome", { name: "Grace" });
      await finished(again);
      assert.equal((await messagesOf(again))[0]?.subject, "Hi, Grace");

      const quiet = await trigger("welcome", { name: "Quiet", quiet: true });
      const [skipped] = await finished(quiet);
      assert.equal(skipped?.status, "skipped");
      assert.match(skipped?.executionDetails.at(-1)?.detail ?? "", /skip condition/);
      assert.equal((await messagesOf(quiet)).length, 0);

      const preview = await api.post("/v1/bridge/preview/welcome/hello", { payload: { name: "Preview" } });
      assert.equal(preview.statusCode, 201, preview.body);
      assert.equal(preview.json().data.outputs.subject, "Hi, Preview");
    });

    test("delay: the bridge times it (2 s); the engine waits by its clock; the next step sees the duration", async () => {
      const tx = await trigger("wait-then-notify", {});
      await poll(
        () => jobsOf(tx),
        (jobs) => jobs[0]?.status === "delayed",
        { what: "the delay to wait" },
      );
      ctx.clock.advance(1_999);
      await drain(ctx);
      assert.equal((await messagesOf(tx)).length, 0, "nothing before 2 s");
      ctx.clock.advance(1);
      await drain(ctx);
      await finished(tx);
      assert.equal((await messagesOf(tx))[0]?.content, "Waited 2000 ms");
    });

    test("email and chat: a custom step's outputs reach them, rendered by the bridge, at the sinks", async () => {
      const address = `${hexId()}@example.com`;
      const subscriberId = hexId();
      const made = await api.post("/v1/subscribers", { subscriberId, email: address, firstName: "Lin" });
      assert.equal(made.statusCode, 201, made.body);
      const hook = await api.put(`/v1/subscribers/${subscriberId}/credentials`, {
        providerId: "slack",
        credentials: { webhookUrl: `${hooks.url}/services/${hexId()}` },
      });
      assert.equal(hook.statusCode, 200, hook.body);
      const tx = await trigger("receipt", { order: 7 }, subscriberId);
      const jobs = await finished(tx);
      assert.deepEqual(
        jobs.map((j) => j.status),
        ["completed", "completed", "completed"],
        JSON.stringify(jobs),
      );
      assert.deepEqual(
        hooks.requests.map((r) => r.body),
        [{ text: "Order R-7 is paid" }],
      );
      const mail = sink.mails.find((m) => m.to.includes(address));
      assert.ok(mail, "the email reached the sink");
      assert.equal(mail.parsed.subject, "Receipt R-7");
      assert.match(String(mail.parsed.html), /Thanks, Lin: order R-7/);
    });

    test("digest: three events, one email listing all three (the digest's events reached the bridge)", async () => {
      const subscriberId = hexId();
      const address = `${subscriberId}@example.com`;
      const to = { subscriberId, email: address };
      const txs = [];
      for (const item of ["apples", "pears", "plums"]) {
        txs.push(await trigger("digest-email", { item }, to));
        await drain(ctx);
      }
      ctx.clock.advance(10_000);
      await drain(ctx);
      for (const tx of txs) await finished(tx);
      const mails = sink.mails.filter((m) => m.to.includes(address));
      assert.equal(mails.length, 1);
      assert.equal(mails[0]?.parsed.subject, "3 updates");
      assert.match(String(mails[0]?.parsed.html), /Items: apples, pears, plums/);
    });

    test("cron delay: waits until the cron's next occurrence (UTC) by the engine's clock; a bad cron fails the step", async () => {
      const due = nextMonday9(ctx.clock.now());
      const tx = await trigger("cron-wait", {});
      const [waiting] = await poll(
        () => jobsOf(tx),
        (jobs) => jobs[0]?.status === "delayed",
        { what: "the cron delay to wait" },
      );
      assert.match(
        waiting?.executionDetails.at(-1)?.detail ?? "",
        new RegExp(`until ${new Date(due).toISOString()}`),
      );
      ctx.clock.advance(due - ctx.clock.now() - 1);
      await drain(ctx);
      assert.equal((await messagesOf(tx)).length, 0, "nothing before the occurrence");
      ctx.clock.advance(1);
      await drain(ctx);
      await finished(tx);
      assert.match((await messagesOf(tx))[0]?.content ?? "", /^Waited \d+ ms$/);

      const bad = await trigger("cron-wait", { cron: "61 * * * *" });
      const [refused] = await finished(bad);
      assert.equal(refused?.status, "failed", JSON.stringify(refused));
      assert.match(
        refused?.executionDetails.at(-1)?.detail ?? "",
        /^The delay cannot be waited: the cron expression "61 \* \* \* \*" is not valid \(.*61.*\): nothing is sent$/,
      );
      assert.equal((await messagesOf(bad)).length, 0);
    });

    test("cron digest: events collect until the cron's next occurrence, then one email lists them", async () => {
      const subscriberId = hexId();
      const address = `${subscriberId}@example.com`;
      const to = { subscriberId, email: address };
      const due = nextMonday9(ctx.clock.now());
      const txs = [];
      for (const item of ["invoices", "refunds", "payouts"]) {
        txs.push(await trigger("cron-digest", { item }, to));
        await drain(ctx);
        ctx.clock.advance(1_000);
      }
      assert.ok(ctx.clock.now() < due, "the events all arrived before the occurrence");
      ctx.clock.advance(due - ctx.clock.now() - 1);
      await drain(ctx);
      assert.equal(
        sink.mails.filter((m) => m.to.includes(address)).length,
        0,
        "nothing before the occurrence",
      );
      ctx.clock.advance(1);
      await drain(ctx);
      for (const tx of txs) await finished(tx);
      const mails = sink.mails.filter((m) => m.to.includes(address));
      assert.equal(mails.length, 1);
      assert.equal(mails[0]?.parsed.subject, "3 this week");
      assert.match(String(mails[0]?.parsed.html), /Week: invoices, refunds, payouts/);
    });

    test("throttle: at most N runs a window per subscriber (and key); the others end throttled in the activity", async () => {
      const subscriberId = hexId();
      const statuses: string[] = [];
      let last: JobView[] = [];
      for (let i = 0; i < 3; i++) {
        const tx = await trigger("limited", {}, subscriberId);
        last = await finished(tx);
        statuses.push(last.map((j) => j.status).join(","));
      }
      assert.deepEqual(statuses, ["completed,completed", "completed,completed", "canceled,canceled"]);
      assert.match(
        last[0]?.executionDetails.at(-1)?.detail ?? "",
        /^Throttled: 2 runs in the last 1 minutes/,
      );
      ctx.clock.advance(60_001);
      const later = await trigger("limited", {}, subscriberId);
      assert.deepEqual(
        (await finished(later)).map((j) => j.status),
        ["completed", "completed"],
      );

      // A stored workflow's throttle step: once per minute per subscriber and value of payload.project.
      const groups = await api.get("/v1/notification-groups");
      const stored = await api.post("/v1/workflows", {
        name: `Stored throttle ${hexId()}`,
        notificationGroupId: groups.json().data[0]._id,
        active: true,
        steps: [
          {
            template: { type: "throttle" },
            metadata: { amount: 1, unit: "minutes", threshold: 1, throttleKey: "project" },
          },
          { template: { type: "in_app", content: "Build of {{project}}" } },
        ],
      });
      assert.equal(stored.statusCode, 201, stored.body);
      const name = stored.json().data.triggers[0].identifier;
      const runs = [];
      for (const project of ["a", "a", "b"]) {
        runs.push(
          (await finished(await trigger(name, { project }, subscriberId))).map((j) => j.status).join(","),
        );
      }
      assert.deepEqual(runs, ["completed,completed", "canceled,canceled", "completed,completed"]);
      const noWindow = await api.post("/v1/workflows", {
        name: `Broken throttle ${hexId()}`,
        notificationGroupId: groups.json().data[0]._id,
        steps: [{ template: { type: "throttle" }, metadata: { threshold: 2 } }],
      });
      assert.equal(noWindow.statusCode, 400, noWindow.body);
      assert.match(noWindow.json().message, /steps\[0\]\.metadata\.amount must be a positive whole number/);
    });

    test("bridge down: retried on 503, then failed with the reason; nothing delivered twice once it is back", async () => {
      const callsBefore = bridge.executeCalls;
      bridge.failNext = 2;
      const flaky = await trigger("welcome", { name: "Retry" });
      const [recovered] = await finished(flaky);
      assert.equal(recovered?.status, "completed");
      assert.equal(bridge.executeCalls - callsBefore, 3, "two 503s, then the answer");
      assert.equal((await messagesOf(flaky)).length, 1);

      bridge.failNext = 100;
      const down = await trigger("welcome", { name: "Down" });
      const [failed] = await finished(down);
      assert.equal(failed?.status, "failed");
      const reason = failed?.executionDetails.at(-1)?.detail ?? "";
      assert.match(reason, /The bridge call failed: the bridge answered HTTP 503 \(after 4 attempts\)/);
      bridge.failNext = 0;
      ctx.clock.advance(3_600_000);
      await drain(ctx);
      assert.equal((await messagesOf(down)).length, 0, "a failed step stays failed");
      assert.equal((await messagesOf(flaky)).length, 1, "the recovered step delivered once");
    });
  },
  {
    clock: () => new ManualClock(START),
    app: () => ({ config: testConfig({ BRIDGE_RETRY_BASE_MS: "1", BRIDGE_TIMEOUT_MS: "3000" }) }),
  },
);
