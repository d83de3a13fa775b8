// The dashboard's workflow pages in a real browser (Debian's Chromium through playwright-core), on
// both backends, finding controls by role and accessible name only: a workflow made through the API
// with every field it takes survives the page's Save, one edit changes one field, a scheduled delay
// is made and saved, a test send reaches Activity and the subscriber's feed, and the list shows what
// it should, and a workflow defined in code (a real @novu/framework app, synced) shows read-only
// steps whose control values are edited and previewed through the bridge. One browser for the file,
// one page per backend.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { Client as NovuClient, workflow } from "@novu/framework";
import { serve } from "@novu/framework/express";
import express from "express";
import type { Browser, Page } from "playwright-core";
import { browserSkip, launchChromium } from "./browser-page.ts";
import { assertAccessible, buildDashboard, consoleProblems } from "./dashboard-page.ts";
import { createGroup, createSubscriber, createWorkflow, uniqueName } from "./factories.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";
import { poll } from "./poll.ts";

const skip = browserSkip("DASHBOARD WORKFLOW BROWSER TESTS");
const outDir = buildDashboard(skip);
let browser: Browser | undefined;
before(async () => {
  if (!skip) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

type Json = Record<string, unknown>;

test("the dashboard's files are within 100 kB gzipped, all together", { skip }, () => {
  const assets = path.join(outDir, "assets");
  const sizes = readdirSync(assets).map((name) => gzipSync(readFileSync(path.join(assets, name))).length);
  const total = sizes.reduce((sum, size) => sum + size, 0);
  assert.ok(total > 0 && total <= 100_000, `${total} bytes gzipped`);
});

/** The workflow without the fields an update moves: what must stay equal across a save. */
const content = (workflow: Json) => {
  const { updatedAt: _updatedAt, ...rest } = workflow;
  return rest;
};

/** Every field the API takes on a workflow and its steps, each with a value that is not its default. */
const everyField = (groupId: string): Json => ({
  name: uniqueName("Every field"),
  notificationGroupId: groupId,
  description: "All the settings the API takes",
  tags: ["orders", "beta"],
  critical: true,
  severity: "medium",
  preferenceSettings: { email: false, sms: true, in_app: true, chat: false, push: true },
  data: { team: "fulfilment", limits: { daily: 3 } },
  steps: [
    {
      name: "Tell in the app",
      shouldStopOnFail: true,
      template: {
        type: "in_app",
        subject: "Order {{orderId}}",
        content: "Your order {{orderId}} shipped",
        avatar: "https://example.com/avatar.png",
        feedIdentifier: "orders",
        cta: {
          type: "redirect",
          data: { url: "https://example.com/orders/{{orderId}}", target: "_blank" },
          action: {
            buttons: [
              { type: "primary", content: "Track", url: "https://example.com/track/{{orderId}}" },
              { type: "secondary", content: "Dismiss" },
            ],
          },
        },
        data: { orderId: "{{orderId}}", kind: "shipping" },
      },
      filters: [
        {
          isNegated: false,
          type: "GROUP",
          value: "OR",
          children: [
            { on: "payload", field: "region", operator: "IN", value: "eu,us" },
            { on: "subscriber", field: "locale", operator: "IS_DEFINED", value: "" },
          ],
        },
        {
          isNegated: true,
          type: "GROUP",
          value: "AND",
          children: [{ on: "payload", field: "muted", operator: "EQUAL", value: "true" }],
        },
      ],
    },
    {
      name: "Wait for the slot",
      template: { type: "delay" },
      metadata: { type: "scheduled", delayPath: "deliverAt" },
    },
    { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
    {
      name: "Bundle",
      template: { type: "digest" },
      metadata: {
        type: "backoff",
        amount: 10,
        unit: "minutes",
        digestKey: "postId",
        backoff: true,
        backoffAmount: 1,
        backoffUnit: "minutes",
        updateMode: true,
      },
    },
    {
      active: false,
      template: {
        type: "email",
        subject: "Shipped: {{orderId}}",
        preheader: "On its way",
        senderName: "The shop",
        contentType: "editor",
        layoutId: null,
        content: [
          { type: "text", content: "Hello {{subscriber.firstName}}" },
          { type: "button", content: "Track", url: "https://example.com/t/{{orderId}}" },
        ],
      },
      replyCallback: { active: true, url: "https://example.com/replies" },
    },
    { template: { type: "sms", content: "Shipped {{orderId}}" } },
    { template: { type: "chat", content: "Order {{orderId}} shipped" } },
    { template: { type: "push", title: "Shipped", content: "Order {{orderId}}" } },
    { template: { type: "custom", action: "sync", options: { retries: 2 } } },
    {
      name: "Not too often",
      template: { type: "throttle" },
      metadata: { amount: 10, unit: "minutes", threshold: 3, throttleKey: "postId" },
    },
  ],
});

/**
 * A code-first app (the framework's express adapter, signed with the environment's secret key) with
 * one workflow whose in-app subject reads a control value. Answers its bridge URL and how to stop it.
 */
async function startBridgeApp(secretKey: string) {
  const greet = workflow(
    "greet",
    async ({ step, payload }) => {
      await step.inApp(
        "hello",
        async (controls) => ({ subject: `${controls.greeting}, ${payload.name}`, body: "Welcome" }),
        {
          controlSchema: {
            type: "object",
            properties: { greeting: { type: "string", default: "Hello" } },
            additionalProperties: false,
          } as const,
        },
      );
    },
    {
      name: "Greeting",
      payloadSchema: {
        type: "object",
        properties: { name: { type: "string" } },
        additionalProperties: false,
      } as const,
    },
  );
  const app = express();
  app.use(express.json());
  const client = new NovuClient({ secretKey, strictAuthentication: true, verbose: false });
  app.use("/api/novu", serve({ client, workflows: [greet] }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/novu`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

forEachBackend(
  "dashboard: workflows",
  (ctx) => {
    describe("in a browser", { skip }, () => {
      let page: Page;
      let problems: string[];
      let base: string;
      let tenant: TestTenant;
      const api = () => ctx.client(tenant.dev.apiKey);
      const read = async (id: string) => (await api().get(`/v1/workflows/${id}`)).json().data as Json;
      const saveButton = () => page.getByRole("button", { name: "Save", exact: true });
      const saved = (text: string) => page.getByRole("status").filter({ hasText: text }).waitFor();
      const flow = () => page.getByRole("navigation", { name: "Flow" });
      const step = (n: number) => flow().getByRole("button", { name: new RegExp(`^Step ${n}:`) });

      async function open(id: string, name: string) {
        await page.goto(`${base}/dashboard/#/workflows/${id}`);
        await page.getByRole("heading", { name: `Edit workflow ${name}` }).waitFor();
      }

      before(async () => {
        assert.ok(browser);
        base = await ctx.app.listen({ port: 0, host: "127.0.0.1" });
        tenant = await ctx.tenant();
        page = await browser.newPage();
        page.setDefaultTimeout(15_000);
        problems = consoleProblems(page);
        await page.goto(`${base}/dashboard/`);
        await page.evaluate((key) => sessionStorage.setItem("tidings.apiKey", key), tenant.dev.apiKey);
        await page.reload();
        await page.getByRole("heading", { name: "Workflows", exact: true }).waitFor();
      });
      after(async () => {
        await page?.close();
      });

      test("a workflow with every field the API takes: Save changes nothing; one edit changes one field; errors name steps as the page does", async () => {
        const group = await createGroup(ctx, tenant.dev.apiKey);
        const made = await createWorkflow(ctx, tenant.dev.apiKey, group._id, everyField(group._id));
        const stored = await read(made._id);
        await open(made._id, made.name);

        // The steps read as a flow, each with its channel and what it does.
        const text = (await flow().textContent()) ?? "";
        for (const line of [
          "Step 1: In-app",
          "Your order {{orderId}} shipped · 3 conditions",
          "Step 2: Delay",
          "delay until payload.deliverAt",
          "delay 5 min",
          "digest by postId for 10 min · backoff 1 min",
          "Step 5: Email",
          "Shipped: {{orderId}} · off",
          "Step 9: Custom",
          "Step 10: Throttle",
          "throttle 3 per 10 min by postId",
        ]) {
          assert.ok(text.includes(line), `the flow shows "${line}": ${text}`);
        }
        // What the API holds shows in the form.
        await page.getByRole("textbox", { name: "Redirect URL" }).waitFor();
        assert.equal(
          await page.getByRole("textbox", { name: "Redirect URL" }).inputValue(),
          "https://example.com/orders/{{orderId}}",
        );
        assert.equal(
          await page.getByRole("checkbox", { name: "Stop the workflow if this step fails" }).isChecked(),
          true,
        );
        await assertAccessible(page, "workflow page, in-app step");
        await step(2).click();
        assert.equal(await page.getByRole("combobox", { name: "Wait" }).inputValue(), "scheduled");
        assert.equal(await page.getByRole("textbox", { name: "Date field" }).inputValue(), "deliverAt");
        await step(4).click();
        assert.equal(await page.getByRole("textbox", { name: "Digest key" }).inputValue(), "postId");
        assert.equal(await page.getByRole("spinbutton", { name: "Backoff amount" }).inputValue(), "1");
        await assertAccessible(page, "workflow page, digest step");
        await step(5).click();
        assert.equal(
          await page.getByRole("textbox", { name: "Block 2 URL" }).inputValue(),
          "https://example.com/t/{{orderId}}",
        );
        assert.equal(
          await page.getByRole("textbox", { name: "Reply callback URL" }).inputValue(),
          "https://example.com/replies",
        );
        await assertAccessible(page, "workflow page, email step");
        await step(9).click();
        await page.getByRole("textbox", { name: "Template fields (JSON)" }).waitFor();
        await step(10).click();
        assert.equal(await page.getByRole("spinbutton", { name: "Threshold" }).inputValue(), "3");
        assert.equal(await page.getByRole("spinbutton", { name: "Amount", exact: true }).inputValue(), "10");
        assert.equal(await page.getByRole("combobox", { name: "Unit", exact: true }).inputValue(), "minutes");
        assert.equal(await page.getByRole("textbox", { name: "Throttle key" }).inputValue(), "postId");
        await assertAccessible(page, "workflow page, throttle step");

        // Save without a change: nothing is written.
        await saveButton().click();
        await saved("No changes to save.");
        assert.deepEqual(await read(made._id), stored);

        // One step field: the scheduled delay's date path. Every step is sent, and only that changed.
        await step(2).click();
        await page.getByRole("textbox", { name: "Date field" }).fill("slot.startsAt");
        await saveButton().click();
        await saved("Workflow saved.");
        const afterPath = await read(made._id);
        const steps = stored.steps as Json[];
        const expected = {
          ...stored,
          steps: steps.map((s, i) =>
            i === 1 ? { ...s, metadata: { ...(s.metadata as Json), delayPath: "slot.startsAt" } } : s,
          ),
        };
        assert.deepEqual(content(afterPath), content(expected));
        assert.notEqual(afterPath.updatedAt, stored.updatedAt);

        // One workflow field: the description.
        await page.getByRole("textbox", { name: "Description" }).fill("Only this changed");
        await saveButton().click();
        await saved("Workflow saved.");
        const afterDescription = await read(made._id);
        assert.deepEqual(
          content(afterDescription),
          content({ ...afterPath, description: "Only this changed" }),
        );

        // A condition added to the SMS step, and the custom step's fields edited as JSON.
        await step(6).click();
        await page.getByRole("button", { name: "Add condition", exact: true }).click();
        await page.getByRole("textbox", { name: "Condition 1 Field" }).fill("vip");
        await page.getByRole("textbox", { name: "Condition 1 Value" }).fill("true");
        await step(9).click();
        await page
          .getByRole("textbox", { name: "Template fields (JSON)" })
          .fill(JSON.stringify({ action: "resync", options: { retries: 3 } }));
        await saveButton().click();
        await saved("Workflow saved.");
        const afterSteps = await read(made._id);
        const before = afterDescription.steps as Json[];
        assert.deepEqual(
          content(afterSteps),
          content({
            ...afterDescription,
            steps: before.map((s, i) =>
              i === 5
                ? {
                    ...s,
                    filters: [
                      {
                        isNegated: false,
                        type: "GROUP",
                        value: "AND",
                        children: [{ on: "payload", field: "vip", operator: "EQUAL", value: "true" }],
                      },
                    ],
                  }
                : i === 8
                  ? { ...s, template: { type: "custom", action: "resync", options: { retries: 3 } } }
                  : s,
            ),
          }),
        );

        // The API's step path is the page's step number, and the page selects that step.
        await step(3).click();
        await page.getByRole("spinbutton", { name: "Amount", exact: true }).fill("0");
        await saveButton().click();
        const alert = page.getByRole("alert").filter({ hasText: "Step 3:" });
        await alert.waitFor();
        assert.match((await alert.textContent()) ?? "", /^Step 3: amount must be a positive whole number/);
        assert.deepEqual(await read(made._id), afterSteps);
        await page.getByRole("spinbutton", { name: "Amount", exact: true }).fill("15");
        await saveButton().click();
        await saved("Workflow saved.");
        const fixed = await read(made._id);
        const third = (fixed.steps as Json[])[2] as Json;
        assert.equal((third.metadata as Json).amount, 15);
        assert.ok(((await flow().textContent()) ?? "").includes("delay 15 min"));
      });

      test("a scheduled delay, a digest and a throttle made on the page are saved as such", async () => {
        const name = uniqueName("Scheduled");
        await page.goto(`${base}/dashboard/#/workflows/new`);
        await page.getByRole("heading", { name: "New workflow" }).waitFor();
        await page.getByRole("textbox", { name: "Name", exact: true }).fill(name);
        await page.getByRole("button", { name: "Add in-app step" }).click();
        await page.getByRole("textbox", { name: "Content" }).fill("Your slot is {{slot}}");
        await page.getByRole("button", { name: "Add delay step" }).click();
        await page
          .getByRole("combobox", { name: "Wait" })
          .selectOption({ label: "Until a date in the payload" });
        await page.getByRole("textbox", { name: "Date field" }).fill("sendAt");
        await page.getByRole("button", { name: "Add digest step" }).click();
        await page.getByRole("textbox", { name: "Digest key" }).fill("postId");
        await assertAccessible(page, "new workflow, digest step");
        await page.getByRole("button", { name: "Add throttle step" }).click();
        await page.getByRole("spinbutton", { name: "Threshold" }).fill("3");
        await page.getByRole("textbox", { name: "Throttle key" }).fill("postId");
        await saveButton().click();
        await saved("Workflow created.");
        await page.getByRole("heading", { name: `Edit workflow ${name}` }).waitFor();
        const [created] = (await api().get(`/v1/workflows?query=${encodeURIComponent(name)}`)).json().data;
        const steps = created.steps as { template: Json; metadata: Json }[];
        assert.deepEqual(
          steps.map((s) => s.template.type),
          ["in_app", "delay", "digest", "throttle"],
        );
        assert.equal(steps[1]?.metadata.type, "scheduled");
        assert.equal(steps[1]?.metadata.delayPath, "sendAt");
        assert.equal(steps[2]?.metadata.digestKey, "postId");
        assert.equal(steps[2]?.metadata.amount, 10);
        assert.equal(steps[2]?.metadata.unit, "minutes");
        assert.equal(steps[3]?.metadata.threshold, 3);
        assert.equal(steps[3]?.metadata.throttleKey, "postId");
        assert.equal(steps[3]?.metadata.amount, 10);
        assert.equal(steps[3]?.metadata.unit, "minutes");
        const text = (await flow().textContent()) ?? "";
        assert.ok(text.includes("delay until payload.sendAt"), text);
        assert.ok(text.includes("digest by postId for 10 min"), text);
        assert.ok(text.includes("throttle 3 per 10 min by postId"), text);
      });

      test("Send test: the payload is prefilled, each step previews with it, and the notification is in Activity and the feed", async () => {
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Tested"),
          active: true,
          steps: [
            {
              template: {
                type: "in_app",
                content: "Hello {{name}}",
                cta: { type: "redirect", data: { url: "https://example.com/hello/{{name}}" } },
              },
            },
            { template: { type: "sms", content: "Hi {{subscriber.firstName}}, {{name}} by text" } },
          ],
        });
        const subscriber = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Grace" });
        await open(workflow._id, workflow.name);
        // The preview beside the selected step.
        const beside = page.getByRole("region", { name: "Preview of step 1" });
        await beside.getByText("Hello", { exact: true }).waitFor();

        await page.getByRole("button", { name: "Send test" }).click();
        const dialog = page.getByRole("dialog", { name: `Send a test of ${workflow.name}` });
        await dialog.waitFor();
        const payload = dialog.getByRole("textbox", { name: "Payload" });
        assert.deepEqual(JSON.parse(await payload.inputValue()), { name: "" });
        await payload.fill(JSON.stringify({ name: "Ada" }));
        await dialog
          .getByRole("region", { name: "Preview of step 1: In-app" })
          .getByText("Hello Ada")
          .waitFor();
        await dialog.getByRole("textbox", { name: "Subscriber ID" }).fill(subscriber.subscriberId);
        // The previews render for that subscriber once it is found.
        await dialog
          .getByRole("region", { name: "Preview of step 2: SMS" })
          .getByText("Hi Grace, Ada by text")
          .waitFor();
        await assertAccessible(page, "send test");
        await dialog.getByRole("button", { name: "Send", exact: true }).click();
        const link = dialog.getByRole("link", { name: "Open the notification in Activity" });
        await link.waitFor();
        assert.match((await dialog.getByRole("status").textContent()) ?? "", /^Sent\. Transaction /);
        const [first] = (await api().get(`/v1/notifications?templates=${workflow._id}`)).json().data;
        assert.equal(await link.getAttribute("href"), `#/activity/${first._id}`);
        // Closed, the page previews the form's changes, not saved yet, with the same payload.
        await dialog.getByRole("button", { name: "Close" }).click();
        await dialog.waitFor({ state: "hidden" });
        await page.getByRole("textbox", { name: "Content" }).fill("Goodbye {{name}}");
        await beside.getByText("Goodbye Ada").waitFor();
        await beside.getByText("With the changes not saved yet.").waitFor();
        assert.equal(
          ((await read(workflow._id)).steps as { template: Json }[])[0]?.template.content,
          "Hello {{name}}",
        );
        await page.getByRole("button", { name: "Send test" }).click();
        await dialog.getByRole("button", { name: "Send", exact: true }).click();
        await link.click();
        await page.getByRole("heading", { name: `Notification of ${workflow.name}` }).waitFor();
        await page.getByRole("link", { name: subscriber.subscriberId }).waitFor();

        const feed = await poll(
          async () =>
            (await api().get(`/v1/subscribers/${subscriber.subscriberId}/notifications/feed`)).json()
              .data as Json[],
          (messages) => messages.length > 0,
          { what: "the test's in-app message", limitMs: 15_000, everyMs: 100 },
        );
        const [message] = feed as { content: string; cta: { data: { url: string } } }[];
        assert.equal(message?.content, "Hello Ada");
        assert.equal(message?.cta.data.url, "https://example.com/hello/Ada");
      });

      test("the list: group, last update and trigger identifier of each workflow; a pager button that leads nowhere is disabled", async () => {
        const group = await createGroup(ctx, tenant.dev.apiKey);
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, group._id, {
          name: uniqueName("Listed"),
          steps: [
            { template: { type: "in_app", content: "Hi" } },
            { template: { type: "delay" }, metadata: { amount: 1, unit: "hours" } },
          ],
        });
        await page.goto(`${base}/dashboard/#/workflows`);
        await page.getByRole("heading", { name: "Workflows", exact: true }).waitFor();
        for (const column of ["Name", "Trigger identifier", "Group", "Steps", "Last updated", "Active"]) {
          await page.getByRole("columnheader", { name: column, exact: true }).waitFor();
        }
        await page.getByRole("searchbox", { name: "Search workflows" }).fill(workflow.name);
        const row = page.getByRole("row").filter({ hasText: workflow.name });
        await row.waitFor();
        await row.getByRole("cell", { name: group.name, exact: true }).waitFor();
        await row.getByRole("cell", { name: workflow.triggers[0].identifier, exact: true }).waitFor();
        await row.getByRole("cell", { name: "In-app → Delay", exact: true }).waitFor();
        const updated = await row.locator("time").getAttribute("datetime");
        assert.equal(updated, workflow.updatedAt);
        const previous = page.getByRole("button", { name: "Previous page" });
        const next = page.getByRole("button", { name: "Next page" });
        assert.equal(await previous.isDisabled(), true);
        assert.equal(await next.isDisabled(), true);
        assert.equal(await previous.evaluate((b) => getComputedStyle(b).cursor), "not-allowed");
        await assertAccessible(page, "workflow list");
      });

      test("a workflow defined in code: marked so, its steps read-only, its control values edited and previewed by the bridge", async () => {
        const bridge = await startBridgeApp(tenant.dev.apiKey);
        try {
          const synced = await api().post("/v1/bridge/sync?source=cli", { bridgeUrl: bridge.url });
          assert.equal(synced.statusCode, 201, synced.body);
          const [code] = synced.json().data as { _id: string; name: string }[];
          assert.ok(code);

          await page.goto(`${base}/dashboard/#/workflows`);
          await page.getByRole("searchbox", { name: "Search workflows" }).fill(code.name);
          const row = page.getByRole("row").filter({ hasText: code.name });
          await row.getByText("Defined in code").waitFor();

          await open(code._id, code.name);
          await page.getByText("Defined in code", { exact: true }).waitFor();
          assert.ok(((await step(1).textContent()) ?? "").includes("hello · from code"));
          assert.equal(await page.getByRole("button", { name: /^Add .* step$/ }).count(), 0);
          assert.equal(await page.getByRole("button", { name: /^(Remove|Move) step/ }).count(), 0);
          // The trigger identifier is the app's workflow id: not editable here.
          assert.equal(await page.getByRole("textbox", { name: "Trigger identifier" }).count(), 0);
          const controls = page.getByRole("textbox", { name: "Control values" });
          assert.deepEqual(JSON.parse(await controls.inputValue()), {});

          // The bridge renders the step with the payload of "Send test".
          await page.getByRole("button", { name: "Send test" }).click();
          const dialog = page.getByRole("dialog", { name: `Send a test of ${code.name}` });
          await dialog.getByRole("textbox", { name: "Payload" }).fill(JSON.stringify({ name: "Ada" }));
          await dialog
            .getByRole("region", { name: "Preview of step 1: In-app" })
            .getByText("Hello, Ada", { exact: true })
            .waitFor();
          await dialog.getByRole("button", { name: "Close" }).click();
          await dialog.waitFor({ state: "hidden" });
          const beside = page.getByRole("region", { name: "Preview of step 1" });
          await beside.getByText("Hello, Ada", { exact: true }).waitFor();

          // A control value typed: the preview follows; saved: the workflow keeps it.
          await controls.fill(JSON.stringify({ greeting: "Hi" }));
          await beside.getByText("Hi, Ada", { exact: true }).waitFor();
          await assertAccessible(page, "workflow defined in code");
          // One the step's control schema refuses: the API's reason, nothing stored.
          await controls.fill(JSON.stringify({ greeting: 5 }));
          await page.getByRole("button", { name: "Save control values" }).click();
          await page.getByRole("alert").filter({ hasText: "controls.greeting must be string" }).waitFor();
          await controls.fill(JSON.stringify({ greeting: "Hi" }));
          await page.getByRole("button", { name: "Save control values" }).click();
          await saved("Control values saved.");
          const stored = await read(code._id);
          const [first] = stored.steps as { code: { controlValues: Json } }[];
          assert.deepEqual(first?.code.controlValues, { greeting: "Hi" });
          // The workflow's own Save sends no steps (they are the app's): nothing to save.
          await saveButton().click();
          await saved("No changes to save.");

          // The active switch still works.
          const active = page.getByRole("switch", { name: `Active: ${code.name}` });
          const was = (await read(code._id)).active;
          await active.click();
          await poll(
            async () => (await read(code._id)).active,
            (now) => now === !was,
            { what: "the code workflow's active switch", limitMs: 15_000, everyMs: 100 },
          );
        } finally {
          await bridge.close();
        }
      });

      test("no console errors but the refused save's", () => {
        assert.deepEqual(
          problems.filter((p) => !/Failed to load resource: .* 400 \(Bad Request\)$/.test(p)),
          [],
        );
      });
    });
  },
  { app: () => ({ dashboardDir: outDir }) },
);
