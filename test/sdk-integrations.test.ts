import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import {
  ChannelTypeEnum,
  ChatProviderIdEnum,
  EmailProviderIdEnum,
  type INotificationTemplateStep,
  Novu,
  StepTypeEnum,
} from "@novu/node";
import { forEachBackend } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { poll } from "./poll.ts";
import { type SmtpSink, startSmtpSink, startWebhookSink, type WebhookSink } from "./sinks.ts";

/**
 * @novu/node's integrations methods against the real server over a socket, and an email and a
 * Slack message sent the way a Novu user sets them up: integration, subscriber (with its chat
 * credentials), workflow, trigger.
 */
forEachBackend("@novu/node SDK: integrations and delivery", (ctx) => {
  let backendUrl = "";
  let smtp: SmtpSink;
  let hooks: WebhookSink;
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    backendUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    smtp = await startSmtpSink();
    hooks = await startWebhookSink();
  });
  after(async () => {
    await smtp.close();
    await hooks.close();
  });
  const sdk = (apiKey: string) => new Novu(apiKey, { backendUrl });

  test("integrations: create, getAll, getActive, update, setIntegrationAsPrimary, getWebhookProviderStatus, delete", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);

    const created = await novu.integrations.create(EmailProviderIdEnum.CustomSMTP, {
      channel: ChannelTypeEnum.EMAIL,
      name: "Office SMTP",
      credentials: {
        host: "smtp.example.com",
        port: "587",
        secure: false,
        user: "mailer",
        password: "sdk-secret",
        from: "office@example.com",
        senderName: "Office",
      },
      active: false,
      check: false,
    });
    assert.equal(created.status, 201);
    const integration = created.data.data;
    assert.match(integration._id, OBJECT_ID);
    assert.equal(integration.providerId, "nodemailer");
    assert.equal(integration.channel, "email");
    assert.equal(integration.credentials.password, "********");
    assert.equal(integration.credentials.host, "smtp.example.com");

    const all = await novu.integrations.getAll();
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.data.data.map((i: { _id: string }) => i._id),
      [integration._id],
    );
    assert.deepEqual((await novu.integrations.getActive()).data.data, []);

    const updated = await novu.integrations.update(integration._id, { active: true, name: "Renamed" });
    assert.equal(updated.status, 200);
    assert.equal(updated.data.data.active, true);
    assert.equal(updated.data.data.name, "Renamed");
    assert.equal((await novu.integrations.getActive()).data.data.length, 1);

    const primary = await novu.integrations.setIntegrationAsPrimary(integration._id);
    assert.equal(primary.status, 200);
    assert.equal(primary.data.data.primary, true);

    const status = await novu.integrations.getWebhookProviderStatus(EmailProviderIdEnum.CustomSMTP);
    assert.equal(status.status, 200);
    assert.equal(status.data.data, false);

    const deleted = await novu.integrations.delete(integration._id);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.data.data, []);
  });

  test("an email and a Slack message, set up and triggered through the SDK", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);
    await novu.integrations.create(EmailProviderIdEnum.CustomSMTP, {
      channel: ChannelTypeEnum.EMAIL,
      credentials: {
        host: "127.0.0.1",
        port: String(smtp.port),
        ignoreTls: true,
        from: "hello@example.com",
        senderName: "Hello Team",
      },
      active: true,
      check: true,
    });
    await novu.integrations.create(ChatProviderIdEnum.Slack, { channel: ChannelTypeEnum.CHAT, active: true });
    const subscriberId = randomBytes(12).toString("hex");
    await novu.subscribers.identify(subscriberId, { email: "lin@example.com", firstName: "Lin" });
    await novu.subscribers.setCredentials(subscriberId, ChatProviderIdEnum.Slack, {
      webhookUrl: `${hooks.url}/services/T1/B1/x`,
    });
    const steps = [
      {
        template: {
          type: StepTypeEnum.EMAIL,
          subject: "Hi {{subscriber.firstName}}",
          content: "<p>{{text}}</p>",
        },
      },
      { template: { type: StepTypeEnum.CHAT, content: "{{text}} (for {{subscriber.firstName}})" } },
    ] as unknown as INotificationTemplateStep[];
    const group = (await novu.notificationGroups.get()).data.data[0];
    const workflow = await novu.notificationTemplates.create({
      name: `SDK delivery ${subscriberId}`,
      notificationGroupId: group._id,
      steps,
      active: true,
    });
    const identifier = workflow.data.data.triggers[0].identifier;
    const mailsBefore = smtp.mails.length;
    const trigger = await novu.trigger(identifier, {
      to: { subscriberId },
      payload: { text: "Your report is ready" },
    });
    assert.equal(trigger.status, 201);

    await poll(
      () => smtp.mails.length,
      (n) => n > mailsBefore,
      { what: "the email" },
    );
    const mail = smtp.mails.at(-1);
    assert.equal(mail?.parsed.subject, "Hi Lin");
    assert.equal(mail?.parsed.from?.text, '"Hello Team" <hello@example.com>');
    assert.deepEqual(mail?.to, ["lin@example.com"]);
    await poll(() => hooks.requests.some((r) => r.path === "/services/T1/B1/x"), Boolean, {
      what: "the Slack message",
    });
    const slack = hooks.requests.find((r) => r.path === "/services/T1/B1/x");
    assert.deepEqual(slack?.body, { text: "Your report is ready (for Lin)" });

    const transactionId = trigger.data.data.transactionId;
    const channels = await poll(
      async () => {
        const messages = await novu.messages.list({ transactionIds: [transactionId] } as never);
        return messages.data.data.map((m: { channel: string }) => m.channel).sort() as string[];
      },
      (found) => found.length === 2,
      { what: "both messages to be recorded" },
    );
    assert.deepEqual(channels, ["chat", "email"]);
  });
});
