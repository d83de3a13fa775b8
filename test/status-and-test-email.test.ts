// What the dashboard's operations views stand on, on both backends: a notification's status at a
// glance (and the list's `status` filter, the same rule in SQL), and Novu's test email
// (`POST /v1/events/test/email`) through an integration, with its refusals as clear 4xx.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { drain } from "./queue-helpers.ts";
import { type SmtpSink, startSmtpSink } from "./sinks.ts";

const hexId = () => randomBytes(12).toString("hex");

forEachBackend<ManualClock>(
  "notification status and the test email",
  (ctx) => {
    const sinks: SmtpSink[] = [];
    after(async () => {
      await Promise.all(sinks.map((s) => s.close()));
    });
    const smtp = (sink: SmtpSink) => ({
      host: "127.0.0.1",
      port: String(sink.port),
      ignoreTls: true,
      from: "team@example.com",
      senderName: "Tidings Team",
    });

    test("each notification's status follows its jobs, and ?status= lists only those in it", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = async (steps: unknown[]) =>
        (await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, { active: true, steps }))
          .triggers[0].identifier as string;
      const inApp = { template: { type: "in_app", content: "Hi" } };
      const email = { template: { type: "email", subject: "Hi", content: "Hi" } };
      const hourDelay = {
        template: { type: "delay" },
        metadata: { type: "regular", amount: 1, unit: "hours" },
      };
      const trigger = async (name: string) => {
        const res = await api.post("/v1/events/trigger", {
          name,
          to: { subscriberId: hexId(), email: "someone@example.com" },
        });
        assert.equal(res.statusCode, 201, res.body);
        return res.json().data.transactionId as string;
      };
      const tx = {
        delivered: await trigger(await workflow([inApp])),
        // No email integration yet: the step is skipped.
        skipped: await trigger(await workflow([email])),
        pending: await trigger(await workflow([hourDelay, inApp])),
        canceled: await trigger(await workflow([hourDelay, inApp])),
      };
      await drain(ctx);
      assert.equal((await api.delete(`/v1/events/trigger/${tx.canceled}`)).statusCode, 200);
      const refusing = await startSmtpSink({ refuseRecipients: { code: 550, message: "No such mailbox" } });
      sinks.push(refusing);
      const made = await api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        active: true,
        credentials: smtp(refusing),
      });
      assert.equal(made.statusCode, 201, made.body);
      // The email fails for good; the in-app step after it is canceled: failed wins.
      const failed = await trigger(await workflow([{ ...email, shouldStopOnFail: true }, inApp]));
      await drain(ctx);
      const all = { ...tx, failed };

      const list = async (query = "") => {
        const res = await api.get(`/v1/notifications?limit=100${query}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data as { transactionId: string; status: string; jobs: { status: string }[] }[];
      };
      const statusOf = Object.fromEntries((await list()).map((n) => [n.transactionId, n.status]));
      for (const [status, transactionId] of Object.entries(all)) {
        assert.equal(statusOf[transactionId], status, `${status}: ${transactionId}`);
      }
      for (const status of Object.keys(all)) {
        const shown = (await list(`&status=${status}`)).map((n) => n.transactionId);
        assert.deepEqual(shown, [all[status as keyof typeof all]], status);
      }
      const either = (await list("&status=pending&status=canceled")).map((n) => n.transactionId).sort();
      assert.deepEqual(either, [tx.pending, tx.canceled].sort());
      // With the other filters: the failed one is the only email notification that failed.
      assert.deepEqual(
        (await list("&status=failed&channels=email")).map((n) => n.transactionId),
        [failed],
      );
      assert.deepEqual(await list("&status=failed&channels=sms&channels=push"), []);
      // The hour passes: the pending one is delivered.
      ctx.clock.advance(60 * 60_000);
      await drain(ctx);
      assert.deepEqual(
        (await list("&status=delivered")).map((n) => n.transactionId).sort(),
        [tx.delivered, tx.pending].sort(),
      );
      assertErrorBody(await api.get("/v1/notifications?status=lost"), 400, {
        path: "/v1/notifications",
        message: /^status must be one of: delivered, failed, skipped, canceled, pending/,
        fields: ["status"],
      });
    });

    test("the test email: rendered with the payload, through the integration named (active or not) or the primary active one; refusals are 4xx", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const path = "/v1/events/test/email";
      const body = {
        to: "ada@example.com",
        subject: "Hello {{name}}",
        content: "<p>Order {{order}}</p>",
        contentType: "customHtml",
        payload: { name: "Ada", order: "<b>A-17</b>" },
      };
      assertErrorBody(await api.post(path, body), 400, {
        path,
        message: /^Missing an active email integration$/,
      });

      const good = await startSmtpSink({ login: { user: "mailer", password: "smtp-Pa55" } });
      const refusing = await startSmtpSink({ refuseRecipients: { code: 550, message: "No such mailbox" } });
      sinks.push(good, refusing);
      const integration = async (credentials: Record<string, unknown>, active: boolean) => {
        const res = await api.post("/v1/integrations", {
          providerId: "nodemailer",
          channel: "email",
          active,
          credentials,
        });
        assert.equal(res.statusCode, 201, res.body);
        return res.json().data as { _id: string; identifier: string };
      };
      // Inactive, named: tried before it is switched on.
      const inactive = await integration({ ...smtp(good), user: "mailer", password: "smtp-Pa55" }, false);
      const sent = await api.post(path, { ...body, integrationId: inactive._id });
      assert.equal(sent.statusCode, 201, sent.body);
      assert.deepEqual(sent.json(), {
        data: { integrationId: inactive._id, identifier: inactive.identifier, to: ["ada@example.com"] },
      });
      const [mail] = good.mails;
      assert.equal(good.mails.length, 1);
      assert.deepEqual(
        [mail?.to, mail?.user, mail?.parsed.subject],
        [["ada@example.com"], "mailer", "Hello Ada"],
      );
      assert.match(String(mail?.parsed.html), /<p>Order &lt;b&gt;A-17&lt;\/b&gt;<\/p>/, "payload escaped");

      // Unnamed: the primary active one, which refuses: a 400 with its reason.
      const active = await integration(smtp(refusing), true);
      assert.equal((await api.post(`/v1/integrations/${active._id}/set-primary`)).statusCode, 200);
      assertErrorBody(await api.post(path, { ...body, to: ["a@example.com", "b@example.com"] }), 400, {
        path,
        message: /^The test email to a@example\.com was not sent: .*550/,
      });
      assert.equal(good.mails.length, 1);

      // A chat integration, another environment's, a bad address, an unknown field.
      const chat = await api.post("/v1/integrations", { providerId: "slack", channel: "chat" });
      assertErrorBody(await api.post(path, { ...body, integrationId: chat.json().data._id }), 400, {
        path,
        message: /^integrationId must name an email integration/,
        fields: ["integrationId"],
      });
      const other = await ctx.tenant();
      assertErrorBody(
        await ctx.client(other.dev.apiKey).post(path, { ...body, integrationId: inactive._id }),
        404,
        {
          path,
          message: new RegExp(`^Integration ${inactive._id} was not found$`),
        },
      );
      assertErrorBody(await api.post(path, { ...body, to: "not an address" }), 400, {
        path,
        message: /^to must be a valid email/,
        fields: ["to"],
      });
      assertErrorBody(await api.post(path, { ...body, unknown: 1 }), 400, {
        path,
        message: /^unknown is not allowed$/,
        fields: ["unknown"],
      });
      assert.equal(good.mails.length, 1, "nothing else was sent");
    });
  },
  { clock: () => new ManualClock(Date.UTC(2026, 5, 1, 12)) },
);
