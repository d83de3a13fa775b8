// The dashboard's operations views driven in Debian's Chromium, on both backends: topics, subscribers
// (create, edit, preference switches, messages), activity (the status column, its filters, the
// payload), integrations (edit keeping the secret, primary), settings (HMAC, switching environments,
// regenerating the key), and the 400 px layout. Controls are found by role and name only; axe-core
// finds nothing serious or critical on any view; the console stays clean. One browser for the file,
// one page per backend; without Chromium the file is skipped loudly (REQUIRE_BROWSER=1: a failure).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { browserSkip, launchChromium } from "./browser-page.ts";
import { buildDashboard } from "./dashboard-page.ts";
import { createSubscriber, createWorkflow, uniqueName } from "./factories.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";
import { poll } from "./poll.ts";
import { type SmtpSink, startSmtpSink } from "./sinks.ts";

const skip = browserSkip("DASHBOARD OPERATIONS BROWSER TESTS");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

// The current sources, built once for the run (test/dashboard-page.ts); one browser for both backends.
const outDir = buildDashboard(skip);
let browser: Browser | undefined;
before(async () => {
  if (skip) return;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

test("the dashboard's files stay within 100 kB gzipped", { skip }, () => {
  const assets = path.join(outDir, "assets");
  const sizes = readdirSync(assets).map((name) => gzipSync(readFileSync(path.join(assets, name))).length);
  const total = sizes.reduce((a, b) => a + b, 0);
  assert.ok(total > 0 && total <= 100 * 1024, `${total} bytes gzipped`);
});

const smtpCredentials = (sink: SmtpSink, more: Record<string, unknown> = {}) => ({
  host: "127.0.0.1",
  port: String(sink.port),
  secure: false,
  ignoreTls: true,
  from: "team@example.com",
  senderName: "Tidings Team",
  ...more,
});

forEachBackend(
  "dashboard operations",
  (ctx) => {
    describe("in a browser", { skip }, () => {
      let page: Page;
      let base: string;
      let tenant: TestTenant;
      // An SMTP server that takes mail only with its login, and one that refuses every recipient.
      let good: SmtpSink;
      let refusing: SmtpSink;
      const problems: string[] = [];
      const api = () => ctx.client(tenant.dev.apiKey);

      before(async () => {
        base = await ctx.app.listen({ port: 0, host: "127.0.0.1" });
        tenant = await ctx.tenant();
        good = await startSmtpSink({ login: { user: "mailer", password: "smtp-Pa55" } });
        refusing = await startSmtpSink({ refuseRecipients: { code: 550, message: "No such mailbox" } });
        assert.ok(browser);
        page = await browser.newPage();
        page.setDefaultTimeout(15_000);
        page.on("console", (message) => {
          if (message.type() === "error") problems.push(`console: ${message.text()}`);
        });
        page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
        page.on("dialog", (dialog) => dialog.accept());
        await page.goto(`${base}/dashboard/`);
        await page.getByRole("textbox", { name: "API key" }).fill(tenant.dev.apiKey);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("heading", { name: "Workflows" }).waitFor();
      });
      after(async () => {
        await page?.close();
        await good?.close();
        await refusing?.close();
      });

      /** axe-core on the page as it is: no serious or critical violation. */
      async function assertAccessible(view: string) {
        await page.evaluate(axeSource);
        const violations = await page.evaluate(async () => {
          // biome-ignore lint/suspicious/noExplicitAny: axe is the script evaluated just above
          const result = await (globalThis as any).axe.run(document);
          return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        });
        assert.deepEqual(violations, [], `axe on ${view}`);
      }

      const open = async (hash: string, heading: string | RegExp) => {
        await page.goto(`${base}/dashboard/#/${hash}`);
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
      };

      let topicKey = "";
      let failedNotification = "";
      test("topics: create one with Key and Name, add a subscriber by its ID, remove it; the API agrees", async () => {
        const member = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Topical" });
        const key = `team-${Date.now()}`;
        topicKey = key;
        const name = uniqueName("Team");
        await open("topics", "Topics");
        await page.getByRole("textbox", { name: "Key" }).fill(key);
        await page.getByRole("textbox", { name: "Name" }).fill(name);
        await page.getByRole("button", { name: "Create" }).click();
        await page.getByRole("link", { name: key }).click();
        await page.getByRole("heading", { name: `Topic ${name}` }).waitFor();
        await page.getByRole("textbox", { name: "Subscriber ID" }).fill(member.subscriberId);
        await page.getByRole("button", { name: "Add", exact: true }).click();
        await page.getByRole("button", { name: `Remove ${member.subscriberId}` }).waitFor();
        assert.deepEqual((await api().get(`/v1/topics/${key}`)).json().data.subscribers, [
          member.subscriberId,
        ]);
        await assertAccessible("topic");
        // A subscriberId nobody has is refused, and the page says so.
        await page.getByRole("textbox", { name: "Subscriber ID" }).fill("nobody-by-this-id");
        await page.getByRole("button", { name: "Add", exact: true }).click();
        await page.getByRole("alert").filter({ hasText: "nobody-by-this-id" }).waitFor();
        await page.getByRole("button", { name: `Remove ${member.subscriberId}` }).click();
        await page.getByText("No subscribers in this topic.").waitFor();
        assert.deepEqual((await api().get(`/v1/topics/${key}`)).json().data.subscribers, []);
        await open("topics", "Topics");
        await page.getByRole("link", { name: key }).waitFor();
        await assertAccessible("topics");
      });

      const shipped = uniqueName("Order shipped");
      let subscriberId = "";
      test("subscribers: New subscriber saved, edited, its preferences switched per workflow and channel; the API agrees", async () => {
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: shipped,
          active: true,
          steps: [
            { template: { type: "in_app", content: "Order {{orderId}} shipped" } },
            {
              template: { type: "email", subject: "Order {{orderId}} shipped", content: "<p>On its way</p>" },
            },
          ],
        });
        subscriberId = `ada-${Date.now()}`;
        await open("subscribers", "Subscribers");
        await page.getByRole("button", { name: "New subscriber" }).click();
        await page.getByRole("textbox", { name: "Subscriber ID" }).fill(subscriberId);
        await page.getByRole("textbox", { name: "Email" }).fill("ada@example.com");
        await page.getByRole("textbox", { name: "First name" }).fill("Ada");
        await assertAccessible("new subscriber");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("heading", { name: `Subscriber ${subscriberId}` }).waitFor();
        const made = (await api().get(`/v1/subscribers/${subscriberId}`)).json().data;
        assert.equal(made.email, "ada@example.com");
        assert.equal(made.firstName, "Ada");

        await page.getByRole("button", { name: "Edit" }).click();
        await page.getByRole("textbox", { name: "First name" }).fill("Augusta");
        await page.getByRole("textbox", { name: "Last name" }).fill("King");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("status").filter({ hasText: "Subscriber saved." }).waitFor();
        const edited = (await api().get(`/v1/subscribers/${subscriberId}`)).json().data;
        assert.deepEqual(
          [edited.firstName, edited.lastName, edited.email],
          ["Augusta", "King", "ada@example.com"],
        );

        const inApp = page.getByRole("switch", { name: `${shipped} in-app` });
        assert.equal(await inApp.getAttribute("aria-checked"), "true");
        await inApp.click();
        await page.getByRole("switch", { name: `${shipped} in-app`, checked: false }).waitFor();
        const preferenceOf = async () =>
          (await api().get(`/v1/subscribers/${subscriberId}/preferences`))
            .json()
            .data.find((p: { template: { _id: string } }) => p.template._id === workflow._id).preference;
        const switched = (await preferenceOf()).channels;
        assert.deepEqual([switched.in_app, switched.email], [false, true]);
        await page.getByRole("switch", { name: `${shipped} email` }).click();
        await page.getByRole("switch", { name: `${shipped} email`, checked: false }).waitFor();
        assert.equal((await preferenceOf()).channels.email, false);
        // Both back on, for the deliveries below.
        await page.getByRole("switch", { name: `${shipped} in-app` }).click();
        await page.getByRole("switch", { name: `${shipped} email` }).click();
        await page.getByRole("switch", { name: `${shipped} email`, checked: true }).waitFor();
        await page.getByRole("switch", { name: `${shipped} in-app`, checked: true }).waitFor();
        const restored = (await preferenceOf()).channels;
        assert.deepEqual([restored.in_app, restored.email], [true, true]);
        await assertAccessible("subscriber");
      });

      let goodName = "";
      let refusingName = "";
      test("integrations: Edit keeps the stored password when its box is left empty; Make primary; Send test; a failed email shows as failed in Activity", async () => {
        goodName = uniqueName("Good relay");
        refusingName = uniqueName("Refusing relay");
        for (const [name, sink, more] of [
          [goodName, good, { user: "mailer", password: "smtp-Pa55" }],
          [refusingName, refusing, {}],
        ] as const) {
          const made = await api().post("/v1/integrations", {
            providerId: "nodemailer",
            channel: "email",
            name,
            active: true,
            credentials: smtpCredentials(sink, more),
          });
          assert.equal(made.statusCode, 201, made.body);
        }
        await open("integrations", "Integrations");
        await page.getByRole("button", { name: `Make primary: ${refusingName}` }).click();
        await page.getByRole("button", { name: `Make primary: ${goodName}` }).waitFor();

        // A trigger through the refusing one: its email fails.
        const failedTx = (
          await api().post("/v1/events/trigger", {
            name: (await api().get(`/v1/workflows?query=${encodeURIComponent(shipped)}`)).json().data[0]
              .triggers[0].identifier,
            to: subscriberId,
            payload: { orderId: "A-17" },
          })
        ).json().data.transactionId as string;
        failedNotification = (
          await poll(
            async () => (await api().get(`/v1/notifications?transactionId=${failedTx}`)).json().data[0],
            (n) => n?.status === "failed",
            { what: "the notification failed" },
          )
        )._id;

        // Edit the good one: a new name and sender, the password box left empty.
        await page.getByRole("button", { name: `Edit ${goodName}` }).click();
        const form = page.getByRole("form", { name: `Edit ${goodName}` });
        assert.equal(await form.getByLabel("SMTP password").inputValue(), "", "the secret is never shown");
        assert.equal(await form.getByRole("textbox", { name: "SMTP user" }).inputValue(), "mailer");
        const renamed = uniqueName("Renamed relay");
        await form.getByRole("textbox", { name: "Integration name" }).fill(renamed);
        await form.getByRole("textbox", { name: "Sender name" }).fill("Shipping desk");
        await assertAccessible("integration edit");
        await page.getByRole("button", { name: "Save changes" }).click();
        await page.getByRole("status").filter({ hasText: "Integration saved." }).waitFor();
        goodName = renamed;
        await page.getByRole("button", { name: `Make primary: ${goodName}` }).click();
        await page.getByRole("button", { name: `Make primary: ${refusingName}` }).waitFor();
        const listed = (await api().get("/v1/integrations")).json().data as {
          name: string;
          primary: boolean;
          credentials: Record<string, unknown>;
        }[];
        const edited = listed.find((i) => i.name === goodName);
        assert.ok(edited?.primary);
        assert.equal(edited.credentials.senderName, "Shipping desk");
        assert.equal(edited.credentials.password, "********");
        assert.equal(listed.find((i) => i.name === refusingName)?.primary, false);
        assert.ok(!(await page.content()).includes("smtp-Pa55"), "the password is nowhere in the page");

        // Send test: through the edited integration (its kept password logs in), at once.
        await page.getByRole("button", { name: `Send test: ${goodName}` }).click();
        await page.getByRole("textbox", { name: "To" }).fill("ops@example.com");
        await assertAccessible("send test");
        await page.getByRole("button", { name: "Send", exact: true }).click();
        await page.getByRole("status").filter({ hasText: "Test email sent to ops@example.com." }).waitFor();
        const test = good.mails.find((m) => m.parsed.subject === "A test email from Tidings");
        assert.deepEqual([test?.to, test?.user], [["ops@example.com"], "mailer"]);
        await page.getByRole("button", { name: "Close" }).click();

        // Delivered through it: the server takes mail only with the login, so the password was kept.
        await api().post("/v1/events/trigger", {
          name: (await api().get(`/v1/workflows?query=${encodeURIComponent(shipped)}`)).json().data[0]
            .triggers[0].identifier,
          to: subscriberId,
          payload: { orderId: "B-2" },
        });
        const mail = await poll(
          () => good.mails.find((m) => m.parsed.subject === "Order B-2 shipped"),
          (found) => found !== undefined,
          { what: "the email through the edited integration" },
        );
        assert.equal(mail?.user, "mailer");
        assert.equal(mail?.parsed.from?.text, '"Shipping desk" <team@example.com>');
        await assertAccessible("integrations");

        // Activity: the failed email at a glance, the filters, its payload.
        await open("activity", "Activity");
        const failedRow = page.getByRole("row").filter({ hasText: failedTx });
        await failedRow.getByText("failed", { exact: true }).waitFor();
        await page.getByRole("combobox", { name: "Status" }).selectOption("failed");
        await page.getByRole("combobox", { name: "Channel" }).selectOption("email");
        await page.getByRole("button", { name: "Filter" }).click();
        await page.waitForFunction((tx) => {
          const rows = [...document.querySelectorAll("tbody tr")];
          return rows.length === 1 && (rows[0]?.textContent ?? "").includes(tx);
        }, failedTx);
        await page.getByRole("figure", { name: /Last \d+ days/ }).waitFor();
        await assertAccessible("activity");
        await failedRow.getByRole("link").click();
        await page.getByRole("heading", { name: `Notification of ${shipped}` }).waitFor();
        await page.getByText('"orderId": "A-17"').waitFor();
        await assertAccessible("notification");

        // The subscriber's messages of every channel: the in-app ones and the delivered email.
        await open(`subscribers/${subscriberId}`, `Subscriber ${subscriberId}`);
        const messages = page.getByRole("table", { name: /Messages of every channel/ });
        await messages.getByRole("cell", { name: "Order B-2 shipped" }).first().waitFor();
        assert.ok((await messages.getByRole("cell", { name: "email", exact: true }).count()) >= 1);
        assert.ok((await messages.getByRole("cell", { name: "in-app", exact: true }).count()) >= 1);
      });

      test("at 400 × 800 no view scrolls sideways, and the sections are behind a Menu button", async () => {
        await page.setViewportSize({ width: 400, height: 800 });
        try {
          for (const [hash, heading] of [
            ["workflows", "Workflows"],
            ["subscribers", "Subscribers"],
            [`subscribers/${subscriberId}`, `Subscriber ${subscriberId}`],
            ["topics", "Topics"],
            [`topics/${topicKey}`, /^Topic /],
            ["activity", "Activity"],
            [`activity/${failedNotification}`, `Notification of ${shipped}`],
            ["integrations", "Integrations"],
            ["settings", "Settings"],
            ["groups", "Groups"],
          ] as const) {
            await open(hash, heading);
            await page.waitForLoadState("networkidle");
            const widths = await page.evaluate(() => ({
              scroll: document.documentElement.scrollWidth,
              client: document.documentElement.clientWidth,
            }));
            assert.ok(widths.scroll <= widths.client, `${hash} scrolls sideways: ${JSON.stringify(widths)}`);
          }
          const topics = page.getByRole("link", { name: "Topics", exact: true });
          assert.equal(await topics.isVisible(), false, "the sections are folded away");
          const menu = page.getByRole("button", { name: "Menu" });
          assert.equal(await menu.getAttribute("aria-expanded"), "false");
          await menu.click();
          assert.equal(await menu.getAttribute("aria-expanded"), "true");
          await topics.click();
          await page.getByRole("heading", { name: "Topics", level: 1 }).waitFor();
          assert.equal(await topics.isVisible(), false, "following a link folds the menu again");
          await assertAccessible("topics at 400 px");
        } finally {
          await page.setViewportSize({ width: 1280, height: 800 });
        }
      });

      test("settings: the environment and its masked keys, HMAC switched, Production switched to by its key, Regenerate: the old key is refused", async () => {
        await open("settings", "Settings");
        const me = (await api().get("/v1/environments/me")).json().data;
        await page.getByText(me.identifier).waitFor();
        const keys = page.getByRole("table", { name: "API keys" });
        await keys
          .getByRole("cell", { name: /\*\*\*\*/ })
          .first()
          .waitFor();
        assert.ok(!(await page.content()).includes(tenant.dev.apiKey), "no key shown whole");
        const hmac = page.getByRole("switch", { name: "Require HMAC for subscriber sessions" });
        assert.equal(await hmac.getAttribute("aria-checked"), "false");
        await hmac.click();
        await page
          .getByRole("switch", { name: "Require HMAC for subscriber sessions", checked: true })
          .waitFor();
        assert.equal((await api().get("/v1/environments/me")).json().data.hmac, true);
        await hmac.click();
        await page
          .getByRole("switch", { name: "Require HMAC for subscriber sessions", checked: false })
          .waitFor();
        assert.equal((await api().get("/v1/environments/me")).json().data.hmac, false);
        await assertAccessible("settings");

        await page.getByRole("button", { name: "Switch to Production" }).click();
        await page.getByLabel("API key for Production").fill(tenant.prod.apiKey);
        await page.getByRole("button", { name: "Switch", exact: true }).click();
        await page.getByRole("link", { name: "Production" }).waitFor();
        // And back without typing the key again: this tab holds it.
        await page.getByRole("button", { name: "Switch to Development" }).click();
        await page.getByRole("link", { name: "Development" }).waitFor();
        await page.getByRole("button", { name: "Switch to Production" }).click();
        await page.getByRole("link", { name: "Production" }).waitFor();

        // Regenerate Production's key: the page goes on with the new one; the old one is refused.
        await page.getByRole("button", { name: "Regenerate" }).click();
        await page.getByRole("status").filter({ hasText: "The previous key no longer works" }).waitFor();
        assert.equal((await ctx.client(tenant.prod.apiKey).get("/v1/environments/me")).statusCode, 401);
        const fresh = await page.evaluate(() => sessionStorage.getItem("tidings.apiKey"));
        assert.ok(fresh && fresh !== tenant.prod.apiKey);
        assert.equal((await ctx.client(fresh).get("/v1/environments/me")).json().data.name, "Production");
        await page.getByRole("link", { name: "Topics", exact: true }).click();
        await page.getByRole("heading", { name: "Topics", level: 1 }).waitFor();
        await page.getByText("No topics yet", { exact: false }).waitFor();
      });

      test("no console errors on any view", () => {
        // Chromium logs a 4xx answer as a console error: the unknown subscriberId's is the scenario.
        const unexpected = problems.filter((p) => !/Failed to load resource: .* 404 \(Not Found\)$/.test(p));
        assert.deepEqual(unexpected, []);
      });
    });
  },
  { app: () => ({ dashboardDir: outDir }) },
);
