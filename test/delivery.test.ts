import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { after, test } from "node:test";
import { sql } from "kysely";
import { ManualClock } from "../src/clock.ts";
import { uniqueName } from "./factories.ts";
import { type Client, forEachBackend, testConfig } from "./harness.ts";
import { poll } from "./poll.ts";
import { drain } from "./queue-helpers.ts";
import { type SmtpSink, startSmtpSink, startWebhookSink, type WebhookSink } from "./sinks.ts";

// Email and chat delivered for real: an SMTP server (smtp-server) and a local HTTP server stand for
// the providers; the engine runs in the app's worker on both backends, under a ManualClock that the
// tests move to make retries due.

// Long enough that a sink in this process answers in time on a loaded machine (the webhook tests'
// sink shares the event loop with the engine); only the "hang" test waits it out.
const WEBHOOK_TIMEOUT_MS = 1_500;
const hexId = () => randomBytes(12).toString("hex");

interface Detail {
  status: string;
  detail: string;
  raw: string;
}
interface JobView {
  _id: string;
  type: string;
  status: string;
  attempts: number;
  executionDetails: Detail[];
}
interface MessageView {
  _id: string;
  _jobId: string;
  channel: string;
  subject: string;
  content: string;
  providerId: string;
  identifier: string;
  transactionId: string;
  status: string;
}

const FINAL = ["completed", "failed", "skipped", "canceled", "merged"];

forEachBackend<ManualClock>(
  "email and chat delivery through real providers",
  (ctx) => {
    const sinks: { close(): Promise<void> }[] = [];
    after(async () => {
      await Promise.all(sinks.map((s) => s.close()));
    });
    const smtpSink = async (options?: Parameters<typeof startSmtpSink>[0]): Promise<SmtpSink> => {
      const sink = await startSmtpSink(options);
      sinks.push(sink);
      return sink;
    };
    const webhookSink = async (): Promise<WebhookSink> => {
      const sink = await startWebhookSink();
      sinks.push(sink);
      return sink;
    };

    /** Resolves once the worker has nothing running and nothing due (by real time on PostgreSQL). */
    const settle = () => drain(ctx);

    /** Moves the business clock on and waits for what fell due to run. */
    async function advance(ms: number): Promise<void> {
      ctx.clock.advance(ms);
      await settle();
    }

    async function tenant() {
      const t = await ctx.tenant();
      return { ...t, api: ctx.client(t.dev.apiKey) };
    }

    async function integration(api: Client, body: Record<string, unknown>) {
      const res = await api.post("/v1/integrations", { active: true, ...body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data as { _id: string; identifier: string };
    }

    const smtpCredentials = (sink: { port: number }, more: Record<string, unknown> = {}) => ({
      host: "127.0.0.1",
      port: String(sink.port),
      secure: false,
      ignoreTls: true,
      from: "team@example.com",
      senderName: "Tidings Team",
      ...more,
    });

    async function workflow(api: Client, groupId: string, steps: unknown[]) {
      const res = await api.post("/v1/workflows", {
        name: uniqueName("Delivery workflow"),
        notificationGroupId: groupId,
        active: true,
        steps,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.triggers[0].identifier as string;
    }

    async function trigger(api: Client, name: string, to: unknown, payload: Record<string, unknown> = {}) {
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", { name, to, payload, transactionId });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.status, "processed", res.body);
      return transactionId;
    }

    async function jobsOf(api: Client, transactionId: string): Promise<JobView[]> {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs);
    }

    /** Waits (real time, bounded) until every job of the transaction is final, and returns them. */
    async function finished(api: Client, transactionId: string): Promise<JobView[]> {
      return poll(
        () => jobsOf(api, transactionId),
        (jobs) => jobs.length > 0 && jobs.every((j) => FINAL.includes(j.status)),
        { what: `the jobs of ${transactionId} to be final` },
      );
    }

    async function messagesOf(api: Client, transactionId: string, channel?: string): Promise<MessageView[]> {
      const res = await api.get(
        `/v1/messages?transactionId=${transactionId}${channel ? `&channel=${channel}` : ""}`,
      );
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data;
    }

    const jobOf = (jobs: JobView[], type: string) => {
      const job = jobs.find((j) => j.type === type);
      assert.ok(job, `a ${type} job in ${JSON.stringify(jobs)}`);
      return job;
    };
    const failedDetails = (job: JobView) => job.executionDetails.filter((d) => d.status === "Failed");

    // ------------------------------------------------------------------ email

    test("email: a real message through the SMTP integration, rendered, with a text part, exactly once", async () => {
      const { api, dev } = await tenant();
      const sink = await smtpSink({ login: { user: "mailer", password: "smtp-Pa55" } });
      await integration(api, {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtpCredentials(sink, { user: "mailer", password: "smtp-Pa55" }),
      });
      const name = await workflow(api, dev.generalGroupId, [
        {
          template: {
            type: "email",
            subject: "Welcome, {{subscriber.firstName}} & co",
            content: "<p>Hello {{subscriber.firstName}}, order {{orderId}} shipped.</p>",
          },
        },
      ]);
      const subscriberId = hexId();
      const tx = await trigger(
        api,
        name,
        { subscriberId, email: "ada@example.com", firstName: "Ada" },
        { orderId: "<b>A-17</b>" },
      );
      const jobs = await finished(api, tx);
      const email = jobOf(jobs, "email");
      assert.equal(email.status, "completed", JSON.stringify(email));
      assert.match(
        email.executionDetails.at(-1)?.detail ?? "",
        /^Email sent through nodemailer \(integration /,
      );

      assert.equal(sink.mails.length, 1);
      const [mail] = sink.mails;
      assert.ok(mail);
      assert.equal(mail.user, "mailer");
      assert.deepEqual(mail.to, ["ada@example.com"]);
      assert.equal(mail.parsed.from?.text, '"Tidings Team" <team@example.com>');
      assert.equal(mail.parsed.subject, "Welcome, Ada & co", "a subject is text: nothing escaped");
      assert.match(String(mail.parsed.html), /<p>Hello Ada, order &lt;b&gt;A-17&lt;\/b&gt; shipped\.<\/p>/);
      assert.equal(String(mail.parsed.text).trim(), "Hello Ada, order <b>A-17</b> shipped.");
      assert.equal(mail.parsed.messageId, `<${email._id}@example.com>`);

      const [message, ...others] = await messagesOf(api, tx, "email");
      assert.equal(others.length, 0);
      assert.ok(message);
      assert.equal(message.channel, "email");
      assert.equal(message.subject, "Welcome, Ada & co");
      assert.equal(message.providerId, "nodemailer");
      assert.equal(message.identifier, mail.parsed.messageId, "the provider's message id");
      assert.equal(message._jobId, email._id);

      await advance(60 * 60_000);
      assert.equal(sink.mails.length, 1, "delivered once");
    });

    test("email: the SMTP server is down, then back: Failed, retried with backoff, delivered once", async () => {
      const { api, dev } = await tenant();
      const probe = await startSmtpSink();
      const port = probe.port;
      await probe.close();
      await integration(api, {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtpCredentials({ port }),
      });
      const name = await workflow(api, dev.generalGroupId, [
        { template: { type: "email", subject: "Hi", content: "<p>Hi</p>" } },
      ]);
      const tx = await trigger(api, name, { subscriberId: hexId(), email: "grace@example.com" });
      await poll(
        () => jobsOf(api, tx),
        ([job]) => job !== undefined && failedDetails(job).length === 1,
        { what: "the first attempt to fail" },
      );
      await settle();
      const [failedJob] = await jobsOf(api, tx);
      assert.ok(failedJob);
      assert.equal(failedJob.status, "running", "waiting for its retry");
      assert.match(failedDetails(failedJob)[0]?.raw ?? "", /SMTP: could not connect over SMTP/);

      const sink = await smtpSink({ port });
      await advance(5_000);
      const jobs = await finished(api, tx);
      assert.equal(jobOf(jobs, "email").status, "completed");
      assert.equal(sink.mails.length, 1);
      await advance(60 * 60_000);
      assert.equal(sink.mails.length, 1, "delivered once");
      assert.equal((await messagesOf(api, tx, "email")).length, 1);
    });

    test("email: a recipient refused for good (550) fails at once; shouldStopOnFail cancels the rest", async () => {
      const { api, dev } = await tenant();
      const sink = await smtpSink({ refuseRecipients: { code: 550, message: "No such mailbox" } });
      await integration(api, {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtpCredentials(sink),
      });
      const name = await workflow(api, dev.generalGroupId, [
        { shouldStopOnFail: true, template: { type: "email", subject: "Hi", content: "Hi" } },
        { template: { type: "in_app", content: "After" } },
      ]);
      const tx = await trigger(api, name, { subscriberId: hexId(), email: "nobody@example.com" });
      const jobs = await finished(api, tx);
      const email = jobOf(jobs, "email");
      assert.equal(email.status, "failed");
      assert.equal(failedDetails(email).length, 1);
      assert.match(failedDetails(email)[0]?.raw ?? "", /SMTP 550/);
      assert.doesNotMatch(
        failedDetails(email)[0]?.raw ?? "",
        /No such mailbox/,
        "the server's words are not kept",
      );
      assert.equal(jobOf(jobs, "in_app").status, "canceled");
      await advance(60 * 60_000);
      assert.equal(failedDetails(jobOf(await jobsOf(api, tx), "email")).length, 1, "never retried");
    });

    test("email: no address, or no active email integration: skipped with the reason; the next step runs", async () => {
      const { api, dev } = await tenant();
      const steps = [
        { template: { type: "email", subject: "Hi", content: "Hi" } },
        { template: { type: "in_app", content: "After" } },
      ];
      const name = await workflow(api, dev.generalGroupId, steps);
      const noIntegration = await finished(
        api,
        await trigger(api, name, { subscriberId: hexId(), email: "a@b.co" }),
      );
      assert.equal(jobOf(noIntegration, "email").status, "skipped");
      assert.equal(
        jobOf(noIntegration, "email").executionDetails.at(-1)?.detail,
        "No active email integration in this environment",
      );
      assert.equal(jobOf(noIntegration, "in_app").status, "completed");

      const sink = await smtpSink();
      await integration(api, {
        providerId: "nodemailer",
        channel: "email",
        credentials: smtpCredentials(sink),
      });
      const noEmail = await finished(api, await trigger(api, name, { subscriberId: hexId() }));
      assert.equal(jobOf(noEmail, "email").status, "skipped");
      assert.equal(
        jobOf(noEmail, "email").executionDetails.at(-1)?.detail,
        "The subscriber has no email address",
      );
      assert.equal(jobOf(noEmail, "in_app").status, "completed");
      assert.equal(sink.mails.length, 0);
    });

    // ------------------------------------------------------------------ chat

    async function chatSetup(
      providers: string[],
      stepMore: Record<string, unknown> = {},
      after: unknown[] = [],
    ) {
      const t = await tenant();
      const sink = await webhookSink();
      for (const providerId of providers) await integration(t.api, { providerId, channel: "chat" });
      const name = await workflow(t.api, t.dev.generalGroupId, [
        {
          ...stepMore,
          template: { type: "chat", content: "Order {{orderId}} for {{subscriber.firstName}}" },
        },
        ...after,
      ]);
      const subscriberId = hexId();
      const created = await t.api.post("/v1/subscribers", { subscriberId, firstName: "Ada" });
      assert.equal(created.statusCode, 201, created.body);
      for (const providerId of providers) {
        const res = await t.api.put(`/v1/subscribers/${subscriberId}/credentials`, {
          providerId,
          credentials: { webhookUrl: `${sink.url}/hooks/${providerId}` },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      return { ...t, sink, name, subscriberId };
    }

    test("chat: Slack, Discord, Teams and Mattermost each get their body at the subscriber's webhook, once", async () => {
      const providers = ["slack", "discord", "msteams", "mattermost"];
      const { api, sink, name, subscriberId } = await chatSetup(providers);
      sink.answer((request) =>
        request.path.endsWith("/discord")
          ? { status: 200, body: JSON.stringify({ id: "998877" }), contentType: "application/json" }
          : { status: 200, body: "ok" },
      );
      const tx = await trigger(api, name, subscriberId, { orderId: "A-17" });
      const jobs = await finished(api, tx);
      assert.equal(jobOf(jobs, "chat").status, "completed", JSON.stringify(jobs));
      const byPath = new Map(sink.requests.map((r) => [r.path, r]));
      assert.equal(sink.requests.length, 4);
      const text = "Order A-17 for Ada";
      assert.deepEqual(byPath.get("/hooks/slack")?.body, { text });
      assert.deepEqual(byPath.get("/hooks/discord")?.body, { content: text });
      assert.deepEqual(byPath.get("/hooks/mattermost")?.body, { text });
      assert.deepEqual(byPath.get("/hooks/msteams")?.body, {
        "@type": "MessageCard",
        "@context": "https://schema.org/extensions",
        text,
      });
      for (const request of sink.requests) {
        assert.equal(request.method, "POST");
        assert.equal(request.headers["content-type"], "application/json");
      }
      const messages = await messagesOf(api, tx, "chat");
      assert.deepEqual(messages.map((m) => m.providerId).sort(), [...providers].sort());
      for (const message of messages) assert.equal(message.content, text);
      assert.equal(messages.find((m) => m.providerId === "discord")?.identifier, "998877");
      assert.match(messages.find((m) => m.providerId === "slack")?.identifier ?? "", /^[0-9a-f]{24}$/);
      await advance(60 * 60_000);
      assert.equal(sink.requests.length, 4, "delivered once");
    });

    test("chat: the subscriber's webhook is sealed at rest, masked in every answer, kept out of templates, and still delivered to", async () => {
      const t = await tenant();
      const sink = await webhookSink();
      await integration(t.api, { providerId: "slack", channel: "chat" });
      const name = await workflow(t.api, t.dev.generalGroupId, [
        { template: { type: "in_app", content: "{{json subscriber}}" } },
        { template: { type: "chat", content: "{{json subscriber}} {{subscriber.channels}}" } },
      ]);
      const subscriberId = hexId();
      const secret = `T0/B0/${hexId()}`;
      const webhookUrl = `${sink.url}/services/${secret}`;
      assert.equal((await t.api.post("/v1/subscribers", { subscriberId, firstName: "Ada" })).statusCode, 201);
      const saved = await t.api.put(`/v1/subscribers/${subscriberId}/credentials`, {
        providerId: "slack",
        credentials: { webhookUrl },
      });
      assert.equal(saved.statusCode, 200, saved.body);

      // Every answer shows it masked: where it goes, not the path that makes it a secret.
      for (const res of [saved, await t.api.get(`/v1/subscribers/${subscriberId}`)]) {
        assert.deepEqual(res.json().data.channels[0].credentials, {
          webhookUrl: `${sink.url}/********`,
          deviceTokens: [],
        });
      }
      for (const res of [
        saved,
        await t.api.get(`/v1/subscribers/${subscriberId}`),
        await t.api.get("/v1/subscribers"),
      ])
        assert.ok(!res.body.includes(secret), res.body);

      // Nowhere in the database in the clear.
      if (ctx.backend === "sqlite") {
        const { rows } = await sql<{
          file: string;
        }>`select file from pragma_database_list where name = 'main'`.execute(ctx.store.db);
        const file = rows[0]?.file ?? "";
        const bytes = Buffer.concat(
          [file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
        );
        assert.notEqual(bytes.indexOf(subscriberId), -1, "the subscriber's row is in the files read");
        assert.equal(bytes.indexOf(secret), -1, "the files hold the webhook's secret path");
      } else {
        const { rows } = await sql<{ row: string }>`select t::text as row from subscribers t`.execute(
          ctx.store.db,
        );
        assert.ok(
          rows.some((r) => r.row.includes(subscriberId)),
          "the subscriber's row is read",
        );
        for (const { row } of rows) assert.ok(!row.includes(secret), row);
      }

      // The engine opens it to deliver, and no template sees it.
      const tx = await trigger(t.api, name, subscriberId);
      const jobs = await finished(t.api, tx);
      assert.equal(jobOf(jobs, "chat").status, "completed", JSON.stringify(jobs));
      assert.equal(sink.requests.length, 1);
      assert.equal(sink.requests[0]?.path, `/services/${secret}`);
      const text = JSON.stringify(sink.requests[0]?.body);
      assert.ok(text.includes(`\\"subscriberId\\":\\"${subscriberId}\\"`), text);
      assert.ok(!text.includes(secret) && !text.includes("channels") && !text.includes("********"), text);
      const [inApp] = await messagesOf(t.api, tx, "in_app");
      assert.ok(
        inApp && !inApp.content.includes(secret) && !inApp.content.includes("channels"),
        inApp?.content,
      );
      assert.ok(!JSON.stringify(jobs).includes(secret));
    });

    test("chat: a webhook sent with the trigger's recipients (inline, and in a fan-out) is kept sealed and masked too, and delivered", async () => {
      const t = await tenant();
      const sink = await webhookSink();
      await integration(t.api, { providerId: "slack", channel: "chat" });
      const name = await workflow(t.api, t.dev.generalGroupId, [
        { template: { type: "chat", content: "Hello {{subscriber.firstName}}" } },
      ]);
      const secrets: string[] = [];
      const recipient = (firstName: string) => {
        const secret = `T1/B1/${hexId()}`;
        secrets.push(secret);
        return {
          subscriberId: hexId(),
          firstName,
          channels: [{ providerId: "slack", credentials: { webhookUrl: `${sink.url}/services/${secret}` } }],
        };
      };
      const inline = recipient("Inline");
      // Over 20 recipients: a fan-out job upserts them after the answer.
      const fanned = recipient("Fanned");
      const actor = recipient("Actor");
      const txInline = await trigger(t.api, name, [inline]);
      const txFanned = hexId();
      const res = await t.api.post("/v1/events/trigger", {
        name,
        to: [fanned, ...Array.from({ length: 20 }, () => hexId())],
        actor,
        transactionId: txFanned,
      });
      assert.equal(res.statusCode, 201, res.body);
      await finished(t.api, txInline);
      await settle();
      const paths = sink.requests.map((r) => r.path).sort();
      assert.deepEqual(paths, [`/services/${secrets[0]}`, `/services/${secrets[1]}`].sort());

      const activity = [
        await t.api.get(`/v1/notifications?transactionId=${txInline}`),
        // Each notification shows its own recipient: the fanned subscriber's, whatever page it is on.
        await t.api.get(`/v1/notifications?transactionId=${txFanned}&subscriberIds=${fanned.subscriberId}`),
      ];
      const shown = activity.find((r) => r.body.includes(fanned.subscriberId));
      assert.ok(shown?.body.includes(`${sink.url}/********`), "the activity shows the recipients, masked");
      for (const body of activity.map((r) => r.body))
        for (const secret of secrets) assert.ok(!body.includes(secret), body);
      if (ctx.backend === "sqlite") {
        const { rows } = await sql<{
          file: string;
        }>`select file from pragma_database_list where name = 'main'`.execute(ctx.store.db);
        const file = rows[0]?.file ?? "";
        const bytes = Buffer.concat(
          [file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
        );
        assert.notEqual(bytes.indexOf(fanned.subscriberId), -1, "the rows are in the files read");
        for (const secret of secrets) assert.equal(bytes.indexOf(secret), -1, `the files hold ${secret}`);
      } else {
        for (const table of ["subscribers", "triggers", "notifications"]) {
          const { rows } = await sql<{
            row: string;
          }>`select t::text as row from ${sql.table(table)} t`.execute(ctx.store.db);
          assert.ok(rows.length > 0, table);
          for (const { row } of rows)
            for (const secret of secrets) assert.ok(!row.includes(secret), `${table}: ${row}`);
        }
      }
    });

    test("chat: 5xx is retried with backoff (first retry within 5 s) and delivered once when the webhook recovers", async () => {
      const { api, sink, name, subscriberId } = await chatSetup(["slack"]);
      sink.answer({ status: 503, body: "upstream down" });
      const tx = await trigger(api, name, subscriberId, { orderId: "B-2" });
      await poll(
        () => sink.requests.length,
        (n) => n === 1,
        { what: "the first attempt" },
      );
      await settle();
      const [job] = await jobsOf(api, tx);
      assert.ok(job);
      assert.equal(failedDetails(job).length, 1);
      assert.match(failedDetails(job)[0]?.raw ?? "", /HTTP 503/);
      assert.doesNotMatch(failedDetails(job)[0]?.raw ?? "", /upstream down/, "the answer's body is not kept");

      await advance(2_000);
      assert.equal(sink.requests.length, 1, "not retried at once");
      sink.answer({ status: 200, body: "ok" });
      await advance(3_000);
      await poll(
        () => sink.requests.length,
        (n) => n === 2,
        { what: "the retry, within 5 s of the failure" },
      );
      const jobs = await finished(api, tx);
      assert.equal(jobOf(jobs, "chat").status, "completed");
      assert.equal((await messagesOf(api, tx, "chat")).length, 1);
      await advance(60 * 60_000);
      assert.equal(sink.requests.length, 2, "delivered once");
    });

    test("chat: a webhook that stays down: at least 5 attempts in 2 minutes, then failed; shouldStopOnFail cancels the rest", async () => {
      const { api, sink, name, subscriberId } = await chatSetup(["mattermost"], { shouldStopOnFail: true }, [
        { template: { type: "in_app", content: "After" } },
      ]);
      sink.answer({ status: 500, body: "boom" });
      const tx = await trigger(api, name, subscriberId, { orderId: "C-3" });
      await poll(
        () => sink.requests.length,
        (n) => n === 1,
        { what: "the first attempt" },
      );
      await settle();
      for (let elapsed = 0; elapsed < 120_000; elapsed += 5_000) await advance(5_000);
      assert.ok(sink.requests.length >= 5, `${sink.requests.length} attempts in the first two minutes`);
      for (let hours = 0; hours < 3; hours++) {
        for (let step = 0; step < 12; step++) await advance(5 * 60_000);
      }
      const jobs = await finished(api, tx);
      const chat = jobOf(jobs, "chat");
      assert.equal(chat.status, "failed");
      assert.equal(sink.requests.length, 8, "the last attempt was the eighth");
      const attempts = failedDetails(chat).filter((d) =>
        /^The chat step failed(;| on its last attempt)/.test(d.detail),
      );
      assert.equal(attempts.length, 8, "one Failed detail per attempt");
      for (const attempt of attempts) assert.match(attempt.raw, /HTTP 500$/);
      assert.equal(attempts.filter((d) => /it will be retried/.test(d.detail)).length, 7);
      assert.match(attempts.at(-1)?.detail ?? "", /on its last attempt$/);
      // (Recorded at the same business instant as the last attempt's: found by content, not position.)
      assert.ok(
        chat.executionDetails.some((d) => /failed for good after 8 attempts/.test(d.detail)),
        JSON.stringify(chat.executionDetails),
      );
      assert.equal(jobOf(jobs, "in_app").status, "canceled");
    });

    test("chat: a 4xx fails at once, never retried", async () => {
      const { api, sink, name, subscriberId } = await chatSetup(["discord"], { shouldStopOnFail: true }, [
        { template: { type: "in_app", content: "After" } },
      ]);
      sink.answer({ status: 404, body: "Unknown Webhook" });
      const tx = await trigger(api, name, subscriberId, { orderId: "D-4" });
      const jobs = await finished(api, tx);
      const chat = jobOf(jobs, "chat");
      assert.equal(chat.status, "failed");
      assert.match(chat.executionDetails.at(-1)?.raw ?? "", /HTTP 404$/);
      assert.equal(jobOf(jobs, "in_app").status, "canceled");
      await advance(60 * 60_000);
      assert.equal(sink.requests.length, 1, "never retried");
    });

    test("chat: no answer within the timeout is a Failed attempt, retried", async () => {
      const { api, sink, name, subscriberId } = await chatSetup(["slack"]);
      sink.answer("hang");
      const tx = await trigger(api, name, subscriberId, { orderId: "E-5" });
      await poll(
        () => jobsOf(api, tx),
        ([job]) => job !== undefined && failedDetails(job).length === 1,
        { what: "the attempt to time out" },
      );
      const [job] = await jobsOf(api, tx);
      assert.match(
        failedDetails(job as JobView)[0]?.raw ?? "",
        new RegExp(`no answer within ${WEBHOOK_TIMEOUT_MS} ms`),
      );
      await settle();
      sink.answer({ status: 200, body: "ok" });
      await advance(5_000);
      assert.equal(jobOf(await finished(api, tx), "chat").status, "completed");
      assert.equal(sink.requests.length, 2);
    });

    test("chat: no webhook, or no active chat integration: skipped with the reason; the next step runs", async () => {
      const { api, dev, sink } = await chatSetup([]);
      const name = await workflow(api, dev.generalGroupId, [
        { template: { type: "chat", content: "Hi" } },
        { template: { type: "in_app", content: "After" } },
      ]);
      const none = await finished(api, await trigger(api, name, hexId()));
      assert.equal(jobOf(none, "chat").status, "skipped");
      assert.equal(
        jobOf(none, "chat").executionDetails.at(-1)?.detail,
        "No active chat integration in this environment",
      );
      assert.equal(jobOf(none, "in_app").status, "completed");

      await integration(api, { providerId: "slack", channel: "chat" });
      const noHook = await finished(api, await trigger(api, name, hexId()));
      assert.equal(jobOf(noHook, "chat").status, "skipped");
      assert.equal(
        jobOf(noHook, "chat").executionDetails.at(-1)?.detail,
        "The subscriber has no webhook for the active chat integrations (slack)",
      );
      assert.equal(jobOf(noHook, "in_app").status, "completed");
      assert.equal(sink.requests.length, 0);
    });
  },
  {
    clock: () => new ManualClock(Date.UTC(2026, 5, 1, 12)),
    app: () => ({ config: testConfig({ WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) }) }),
  },
);
