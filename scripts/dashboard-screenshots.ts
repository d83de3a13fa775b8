// Takes the README's screenshots of the dashboard (docs/dashboard-*.png): a throwaway SQLite
// database with a few workflows, groups, subscribers and one triggered notification, the built app
// (npm run build first) and Debian's Chromium. Not part of the tests.
//
//   npm run build && npm run dashboard:screenshots
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { buildApp } from "../src/app.ts";
import { createOrganization } from "../src/onboarding/service.ts";
import { openStore } from "../src/store/store.ts";

const repo = path.resolve(import.meta.dirname, "..");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(path.join(repo, "dist/dashboard/index.html"))) throw new Error("run npm run build first");

const dataDir = mkdtempSync(path.join(os.tmpdir(), "tidings-shots-"));
const store = await openStore({ dataDir });
await store.migrate();
// A throwaway key for the integrations' credentials (the database is thrown away too).
const app = await buildApp({ store, secretKey: randomBytes(32) });
const base = await app.listen({ port: 0, host: "127.0.0.1" });
const org = await createOrganization({ db: store.db, clock: app.clock }, "Acme");
const key = org.environments.find((e) => e.name === "Development")?.apiKey ?? "";

async function call(method: string, url: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `ApiKey ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()).data;
}

const billing = await call("POST", "/v1/notification-groups", { name: "Billing" });
await call("POST", "/v1/notification-groups", { name: "Security" });
const welcome = await call("POST", "/v1/workflows", {
  name: "Welcome",
  notificationGroupId: billing._id,
  active: true,
  steps: [
    { template: { type: "in_app", content: "Welcome, {{subscriber.firstName}}!" } },
    { template: { type: "delay" }, metadata: { amount: 1, unit: "days" } },
    { template: { type: "email", subject: "Getting started", content: "Here is how to begin." } },
  ],
});
const comments = await call("POST", "/v1/workflows", {
  name: "New comments",
  notificationGroupId: billing._id,
  active: true,
  tags: ["social"],
  steps: [
    {
      name: "In the app",
      template: {
        type: "in_app",
        content: "{{author}} commented on {{postTitle}}",
        cta: { type: "redirect", data: { url: "/posts/{{postId}}" } },
      },
    },
    { template: { type: "delay" }, metadata: { amount: 5, unit: "minutes" } },
    {
      name: "Digest",
      template: { type: "digest" },
      metadata: { amount: 10, unit: "minutes", digestKey: "postId" },
    },
    {
      template: {
        type: "email",
        subject: "{{step.total_count}} new comments on {{postTitle}}",
        content: "<p>{{author}} and others commented.</p>",
      },
    },
  ],
});
await call("POST", "/v1/workflows", {
  name: "Invoice paid",
  notificationGroupId: billing._id,
  steps: [{ template: { type: "in_app", content: "Invoice {{invoice}} is paid" } }],
});
for (const [id, first, last] of [
  ["ada", "Ada", "Lovelace"],
  ["grace", "Grace", "Hopper"],
  ["alan", "Alan", "Turing"],
]) {
  await call("POST", "/v1/subscribers", {
    subscriberId: id,
    firstName: first,
    lastName: last,
    email: `${id}@example.com`,
  });
}
await call("POST", "/v1/integrations", {
  providerId: "nodemailer",
  channel: "email",
  name: "Mail relay",
  active: true,
  credentials: {
    host: "smtp.example.com",
    port: "587",
    user: "mailer",
    password: "not-shown",
    from: "hello@example.com",
  },
});
await call("POST", "/v1/integrations", {
  providerId: "slack",
  channel: "chat",
  name: "Team Slack",
  active: false,
});
const { transactionId } = await call("POST", "/v1/events/trigger", {
  name: welcome.triggers[0].identifier,
  to: { subscriberId: "ada" },
});
for (let i = 0; i < 100; i++) {
  const feed = await call("GET", "/v1/subscribers/ada/notifications/feed");
  if (feed.length > 0) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const [notification] = await call("GET", `/v1/notifications?transactionId=${transactionId}`);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ["--headless", "--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
  const shot = async (name: string, hash: string, ready: string) => {
    await page.goto(`${base}/dashboard/${hash}`);
    await page.getByRole("heading", { name: ready }).first().waitFor();
    await page.screenshot({ path: path.join(repo, "docs", `dashboard-${name}.png`) });
    console.log(`docs/dashboard-${name}.png`);
  };
  await page.goto(`${base}/dashboard/`);
  await page.getByRole("textbox", { name: "API key" }).waitFor();
  await page.screenshot({ path: path.join(repo, "docs/dashboard-sign-in.png") });
  await page.getByRole("textbox", { name: "API key" }).fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await shot("workflows", "#/workflows", "Workflows");
  await page.goto(`${base}/dashboard/#/workflows/${comments._id}`);
  await page.getByRole("heading", { name: "Edit workflow New comments" }).waitFor();
  await page.getByRole("button", { name: /^Step 3:/ }).click();
  await page.getByRole("textbox", { name: "Digest key" }).waitFor();
  await page.screenshot({ path: path.join(repo, "docs/dashboard-workflow-editor.png"), fullPage: true });
  console.log("docs/dashboard-workflow-editor.png");
  await shot("groups", "#/groups", "Groups");
  await shot("subscribers", "#/subscribers", "Subscribers");
  await shot("subscriber", "#/subscribers/ada", "Subscriber ada");
  await shot("activity", "#/activity", "Activity");
  await shot("notification", `#/activity/${notification._id}`, "Notification of Welcome");
  await shot("integrations", "#/integrations", "Integrations");
  await shot("topics", "#/topics", "Topics");
  await shot("settings", "#/settings", "Settings");
} finally {
  await browser.close();
  await app.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
