import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { after, test } from "node:test";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/ops/logging.ts";
import { assertErrorBody } from "./error-body.ts";
import { uniqueName } from "./factories.ts";
import { type Client, forEachBackend, TEST_SECRET_KEY, testConfig } from "./harness.ts";
import { poll } from "./poll.ts";
import { type SmtpSink, startSmtpSink, startWebhookSink, type WebhookSink } from "./sinks.ts";

// A subscriber's chat webhook and an integration's SMTP host are where Tidings connects on a
// caller's behalf. Pointed at an internal service (here: listeners on 127.0.0.1, the only address
// these tests send anything to), they reach nothing unless TIDINGS_OUTBOUND_ALLOW allows it; and
// what such a service answers never comes back, in an answer or a log line.

const FINAL = ["completed", "failed", "skipped", "canceled", "merged"];
const hexId = () => randomBytes(12).toString("hex");

interface JobView {
  type: string;
  status: string;
  executionDetails: { status: string; detail: string; raw: string }[];
}

/** What each suite shares: the local listeners (closed after it), and the calls that set up a delivery. */
function fixtures() {
  const closing: { close(): Promise<void> }[] = [];
  after(async () => {
    await Promise.all(closing.map((c) => c.close()));
  });
  return {
    async sinks(): Promise<{ smtp: SmtpSink; hooks: WebhookSink }> {
      const smtp = await startSmtpSink();
      const hooks = await startWebhookSink();
      closing.push(smtp, hooks);
      return { smtp, hooks };
    },
    async workflow(api: Client, groupId: string, steps: unknown[]): Promise<string> {
      const res = await api.post("/v1/workflows", {
        name: uniqueName("Outbound workflow"),
        notificationGroupId: groupId,
        active: true,
        steps,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.triggers[0].identifier;
    },
    async trigger(api: Client, name: string, to: unknown, payload: Record<string, unknown> = {}) {
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", { name, to, payload, transactionId });
      assert.equal(res.statusCode, 201, res.body);
      return transactionId;
    },
    async finished(api: Client, transactionId: string): Promise<{ jobs: JobView[]; body: string }> {
      let jobs: JobView[] = [];
      let body = "";
      await poll(
        async () => {
          const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
          body = res.body;
          jobs = res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs);
          return jobs.length > 0 && jobs.every((j) => FINAL.includes(j.status));
        },
        Boolean,
        { what: `the jobs of ${transactionId} are final`, limitMs: 30_000 },
      );
      return { jobs, body };
    },
  };
}

const CHAT_AND_EMAIL = [
  { template: { type: "email", subject: "Order {{orderId}}", content: "<p>Order {{orderId}}</p>" } },
  { template: { type: "chat", content: "Order {{orderId}}" } },
];

// ------------------------------------------------------------------------------------------------

const strictLines: string[] = [];

forEachBackend(
  "outbound policy: internal addresses refused by default",
  (ctx) => {
    const f = fixtures();

    test("a webhookUrl written as an internal address or localhost: 400 naming the field, when saved", async () => {
      const t = await ctx.tenant();
      const api = ctx.client(t.dev.apiKey);
      const subscriberId = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId })).statusCode, 201);
      const internal = [
        "http://127.0.0.1:8080/hook",
        "http://localhost:9200/_search",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]:22/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "https://192.168.1.1/admin",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://100.64.0.1/",
        "http://[fd00::1]/",
      ];
      const path = `/v1/subscribers/${subscriberId}/credentials`;
      for (const webhookUrl of internal) {
        for (const send of [api.put.bind(api), api.patch.bind(api)]) {
          const res = await send(path, { providerId: "slack", credentials: { webhookUrl } });
          assertErrorBody(res, 400, {
            path,
            fields: ["credentials.webhookUrl"],
            message:
              /^credentials\.webhookUrl must not name an internal address: .* TIDINGS_OUTBOUND_ALLOW does not allow/,
          });
        }
      }
      const channels = [{ providerId: "slack", credentials: { webhookUrl: "http://127.0.0.1:25/" } }];
      const refusedChannel = {
        fields: ["channels[0].credentials.webhookUrl"],
        message: /^channels\[0\]\.credentials\.webhookUrl must not name an internal address/,
      };
      assertErrorBody(await api.post("/v1/subscribers", { subscriberId: hexId(), channels }), 400, {
        path: "/v1/subscribers",
        ...refusedChannel,
      });
      assertErrorBody(await api.put(`/v1/subscribers/${subscriberId}`, { channels }), 400, {
        path: `/v1/subscribers/${subscriberId}`,
        ...refusedChannel,
      });
      const bulk = await api.post("/v1/subscribers/bulk", {
        subscribers: [{ subscriberId: hexId(), channels }],
      });
      assert.equal(bulk.statusCode, 201, bulk.body);
      assert.match(bulk.json().data.failed[0]?.message ?? "", /webhookUrl must not name an internal address/);
      // A public URL, or a name (resolved when the step sends), is saved.
      for (const webhookUrl of [
        "https://hooks.slack.com/services/T0/B0/x",
        "https://chat.internal.example/hook",
      ]) {
        const res = await api.put(`/v1/subscribers/${subscriberId}/credentials`, {
          providerId: "slack",
          credentials: { webhookUrl },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    });

    test("an SMTP host written as an internal address or localhost: 400 naming credentials.host, when saved", async () => {
      const t = await ctx.tenant();
      const api = ctx.client(t.dev.apiKey);
      const smtp = (host: string) => ({ host, port: "587", from: "team@example.com" });
      for (const host of ["127.0.0.1", "localhost", "10.0.0.25", "169.254.169.254", "::1"]) {
        for (const active of [true, false]) {
          const res = await api.post("/v1/integrations", {
            providerId: "nodemailer",
            channel: "email",
            active,
            credentials: smtp(host),
          });
          assertErrorBody(res, 400, {
            path: "/v1/integrations",
            fields: ["credentials.host"],
            message:
              /^credentials\.host must not name an internal address: .* TIDINGS_OUTBOUND_ALLOW does not allow/,
          });
        }
      }
      const created = await api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtp("smtp.example.com"),
      });
      assert.equal(created.statusCode, 201, created.body);
      const path = `/v1/integrations/${created.json().data._id}`;
      assertErrorBody(await api.put(path, { credentials: smtp("127.0.0.1") }), 400, {
        path,
        fields: ["credentials.host"],
        message: /^credentials\.host must not name an internal address/,
      });
    });

    test("an integration and a webhook saved where loopback was allowed reach nothing here: the steps fail with the reason", async () => {
      const t = await ctx.tenant();
      const api = ctx.client(t.dev.apiKey);
      const { smtp, hooks } = await f.sinks();
      // Another process of the same database, configured to allow loopback, saved them.
      const permissive = await buildApp({
        store: ctx.store,
        config: testConfig(),
        secretKey: TEST_SECRET_KEY,
        realtimeCluster: false,
        runWorker: false,
      });
      try {
        const other = {
          post: (url: string, body: unknown) =>
            permissive.inject({
              method: "POST",
              url,
              payload: body as object,
              headers: { authorization: `ApiKey ${t.dev.apiKey}` },
            }),
          put: (url: string, body: unknown) =>
            permissive.inject({
              method: "PUT",
              url,
              payload: body as object,
              headers: { authorization: `ApiKey ${t.dev.apiKey}` },
            }),
        };
        for (const body of [
          {
            providerId: "nodemailer",
            channel: "email",
            credentials: {
              host: "127.0.0.1",
              port: String(smtp.port),
              ignoreTls: true,
              from: "team@example.com",
            },
          },
          { providerId: "slack", channel: "chat" },
        ]) {
          const res = await other.post("/v1/integrations", { active: true, ...body });
          assert.equal(res.statusCode, 201, res.body);
        }
        const subscriberId = hexId();
        assert.equal(
          (await other.post("/v1/subscribers", { subscriberId, email: "ada@example.com" })).statusCode,
          201,
        );
        const saved = await other.put(`/v1/subscribers/${subscriberId}/credentials`, {
          providerId: "slack",
          credentials: { webhookUrl: `${hooks.url}/hook` },
        });
        assert.equal(saved.statusCode, 200, saved.body);

        const name = await f.workflow(api, t.dev.generalGroupId, CHAT_AND_EMAIL);
        const { jobs } = await f.finished(api, await f.trigger(api, name, subscriberId, { orderId: "A-1" }));
        const [email, chat] = jobs;
        assert.equal(email?.status, "failed", JSON.stringify(email));
        assert.equal(
          email?.executionDetails.at(-1)?.detail,
          "The nodemailer provider refused the message; it is not retried",
        );
        assert.match(
          email?.executionDetails.at(-1)?.raw ?? "",
          /SMTP: refused: 127\.0\.0\.1 is a loopback address/,
        );
        assert.equal(chat?.status, "failed", JSON.stringify(chat));
        assert.match(
          chat?.executionDetails.at(-1)?.raw ?? "",
          /slack webhook: refused: 127\.0\.0\.1 is a loopback address/,
        );
        assert.equal(smtp.connections, 0, "the SMTP listener got no connection");
        assert.equal(hooks.requests.length, 0, "the webhook listener got no request");
      } finally {
        await permissive.close();
      }
    });

    test("a webhook given inline with a trigger, to an internal address: the step fails, the listener gets nothing", async () => {
      const t = await ctx.tenant();
      const api = ctx.client(t.dev.apiKey);
      const { hooks } = await f.sinks();
      assert.equal(
        (await api.post("/v1/integrations", { providerId: "discord", channel: "chat", active: true }))
          .statusCode,
        201,
      );
      const name = await f.workflow(api, t.dev.generalGroupId, [
        { template: { type: "chat", content: "Hi" } },
      ]);
      const to = {
        subscriberId: hexId(),
        channels: [{ providerId: "discord", credentials: { webhookUrl: `${hooks.url}/api/webhooks/1/x` } }],
      };
      const { jobs } = await f.finished(api, await f.trigger(api, name, to));
      assert.equal(jobs[0]?.status, "failed");
      assert.match(
        jobs[0]?.executionDetails.at(-1)?.raw ?? "",
        /refused: 127\.0\.0\.1 is a loopback address/,
      );
      assert.equal(hooks.requests.length, 0);
    });
  },
  {
    app: () => ({
      config: loadConfig({}),
      logger: createLogger("info", { write: (line: string) => strictLines.push(line) }),
    }),
  },
);

// ------------------------------------------------------------------------------------------------

const allowedLines: string[] = [];
const SECRET = `internal-service-body-${randomBytes(6).toString("hex")}`;

forEachBackend(
  "outbound policy: TIDINGS_OUTBOUND_ALLOW opens loopback; answers stay out of the records",
  (ctx) => {
    const f = fixtures();

    test("the same webhook and SMTP host deliver; what the listener answers is in no answer and no log line", async () => {
      const t = await ctx.tenant();
      const api = ctx.client(t.dev.apiKey);
      const { smtp, hooks } = await f.sinks();
      for (const body of [
        {
          providerId: "nodemailer",
          channel: "email",
          credentials: {
            host: "127.0.0.1",
            port: String(smtp.port),
            ignoreTls: true,
            from: "team@example.com",
          },
        },
        { providerId: "slack", channel: "chat" },
      ]) {
        const res = await api.post("/v1/integrations", { active: true, ...body });
        assert.equal(res.statusCode, 201, res.body);
      }
      const subscriberId = hexId();
      assert.equal(
        (await api.post("/v1/subscribers", { subscriberId, email: "ada@example.com" })).statusCode,
        201,
      );
      const saved = await api.put(`/v1/subscribers/${subscriberId}/credentials`, {
        providerId: "slack",
        credentials: { webhookUrl: `${hooks.url}/hook` },
      });
      assert.equal(saved.statusCode, 200, saved.body);
      const name = await f.workflow(api, t.dev.generalGroupId, CHAT_AND_EMAIL);
      const answers: string[] = [];

      // The listener answers 200 with its secret: delivered, and only the status is kept.
      hooks.answer({
        status: 200,
        body: JSON.stringify({ ok: true, token: SECRET }),
        contentType: "application/json",
      });
      const delivered = await f.trigger(api, name, subscriberId, { orderId: "A-1" });
      const first = await f.finished(api, delivered);
      answers.push(first.body);
      assert.deepEqual(
        first.jobs.map((j) => j.status),
        ["completed", "completed"],
        first.body,
      );
      assert.equal(smtp.mails.length, 1);
      assert.equal(hooks.requests.length, 1);
      assert.match(
        first.jobs[1]?.executionDetails.at(-1)?.raw ?? "",
        /^slack \(integration [^)]+\): HTTP 200$/,
      );
      assert.match(first.jobs[0]?.executionDetails.at(-1)?.raw ?? "", /^SMTP 250$/);

      // It answers 403, then 500, with its secret: refused or retried, only the status kept.
      for (const status of [403, 500]) {
        hooks.answer({ status, body: `${SECRET} (status ${status})` });
        const tx = await f.trigger(api, name, subscriberId, { orderId: `B-${status}` });
        await poll(
          async () => {
            const res = await api.get(`/v1/notifications?transactionId=${tx}`);
            answers.push(res.body);
            const chat = res
              .json()
              .data.flatMap((n: { jobs: JobView[] }) => n.jobs)
              .find((j: JobView) => j.type === "chat");
            return chat?.executionDetails.some((d: { status: string }) => d.status === "Failed") ?? false;
          },
          Boolean,
          { what: `the chat step of ${tx} failed once` },
        );
        const raw = JSON.parse(answers.at(-1) ?? "{}")
          .data.flatMap((n: { jobs: JobView[] }) => n.jobs)
          .find((j: JobView) => j.type === "chat")
          .executionDetails.find((d: { status: string }) => d.status === "Failed").raw;
        assert.match(raw, new RegExp(`HTTP ${status}$`));
      }
      for (const url of [
        "/v1/messages?channel=chat",
        "/v1/messages?channel=email",
        "/v1/notifications?page=0",
      ]) {
        answers.push((await api.get(url)).body);
      }
      assert.ok(hooks.requests.length >= 3);
      for (const answer of answers)
        assert.ok(!answer.includes(SECRET), "the listener's answer is in an API answer");
      assert.ok(
        allowedLines.some((line) => line.includes("HTTP 500")),
        "the failed delivery was logged, with its status",
      );
      for (const line of allowedLines)
        assert.ok(!line.includes(SECRET), `the listener's answer is in a log line: ${line}`);
    });

    test("check: true answers one failure for nothing listening, a silent listener and one that is not SMTP", async () => {
      const t = await ctx.tenant();
      const api = ctx.client(t.dev.apiKey);
      const banner = `SSH-2.0-OpenSSH_9.6 ${SECRET}`;
      const listeners: net.Server[] = [];
      const listen = async (onConnection: (socket: net.Socket) => void) => {
        const server = net.createServer(onConnection);
        listeners.push(server);
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return (server.address() as net.AddressInfo).port;
      };
      try {
        const closed = await listen(() => {});
        await new Promise((resolve) => listeners[0]?.close(resolve));
        const ports = [
          closed,
          await listen(() => {}),
          await listen((socket) => socket.write(`${banner}\r\n`)),
          await listen((socket) => socket.end(`HTTP/1.1 400 ${SECRET}\r\n\r\n`)),
        ];
        for (const port of ports) {
          const res = await api.post("/v1/integrations", {
            providerId: "nodemailer",
            channel: "email",
            credentials: { host: "127.0.0.1", port: String(port), from: "team@example.com" },
            check: true,
          });
          assertErrorBody(res, 400, {
            path: "/v1/integrations",
            message: new RegExp(
              `^The SMTP check failed: SMTP: could not connect to 127\\.0\\.0\\.1:${port} over SMTP$`,
            ),
          });
        }
        for (const line of allowedLines)
          assert.ok(!line.includes(SECRET), `a banner is in a log line: ${line}`);
      } finally {
        for (const server of listeners) server.close();
      }
    });
  },
  {
    app: () => ({
      config: testConfig({ SMTP_TIMEOUT_MS: "300" }),
      logger: createLogger("info", { write: (line: string) => allowedLines.push(line) }),
    }),
  },
);
