// Novu's current inbox (@novu/react 3.19's <Inbox />, over @novu/js) in a customer's page on another
// origin, against Tidings listening on a port: the page (test/inbox-page) is bundled here with
// esbuild and opened in Debian's Chromium through playwright-core, on both backends. The bell counts
// a new notification without a reload (the socket), the popover shows it, reading and archiving it
// go through the component's own buttons, the preferences panel changes a channel the API then
// reports; no console error, no failed request, axe finds nothing serious or critical in the open
// inbox. A second test pins what the README warns of: the two props that send the page to Novu's
// cloud. Nothing here reaches Novu's servers: every request and socket to novu.co is stopped and
// recorded. Without a Chromium this is skipped, loudly; REQUIRE_BROWSER=1 makes that a failure.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { browserSkip, launchChromium, servePage } from "./browser-page.ts";
import { createWorkflow, uniqueName } from "./factories.ts";
import { type Client, forEachBackend } from "./harness.ts";
import { applicationIdentifierOf, subscriberHash } from "./inbox-client.ts";
import { poll } from "./poll.ts";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const skip = browserSkip("INBOX (@novu/react) BROWSER TESTS");
// The customer's page: its own origin (a port of its own), serving the bundle.
const customerPage = servePage(path.resolve(import.meta.dirname, "inbox-page"), skip);

const NOVU_CLOUD = /^(https|wss):\/\/([a-z0-9-]+\.)*novu(-staging)?\.co\//;

/** A browser context whose requests and sockets to Novu's cloud are stopped, and listed in `cloud`. */
async function isolatedContext(browser: Browser): Promise<{ context: BrowserContext; cloud: string[] }> {
  const context = await browser.newContext();
  const cloud: string[] = [];
  await context.route(NOVU_CLOUD, async (route) => {
    cloud.push(`${route.request().method()} ${route.request().url()}`);
    await route.abort("blockedbyclient");
  });
  // Not connected to any server: the page's socket opens and hears nothing.
  await context.routeWebSocket(NOVU_CLOUD, (socket) => {
    cloud.push(`WS ${socket.url()}`);
  });
  return { context, cloud };
}

/** What went wrong in the page: console errors, script errors, failed or refused requests. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
  page.on("requestfailed", (request) =>
    problems.push(`failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`),
  );
  page.on("response", (response) => {
    if (response.status() >= 400)
      problems.push(`${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return problems;
}

/** axe-core on the page as it is: each node of a serious or critical violation, a line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the script evaluated just above
    const result = await (globalThis as any).axe.run(document);
    return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id}: ${n.target.join(" ")}`));
  });
}

/**
 * Runs a step of the scenario; when it fails, the page's accessibility tree is added to the error,
 * as the component's markup is what changes under this test (a newer @novu/react).
 */
async function step<T>(page: Page, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const tree = await page
      .locator("body")
      .ariaSnapshot({ timeout: 2_000 })
      .catch(() => "(no snapshot)");
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${what}: ${message}\n--- the page's accessibility tree:\n${tree}`, { cause: error });
  }
}

interface Preference {
  template: { _id: string };
  preference: { enabled: boolean; channels: Record<string, boolean> };
}

async function workflowPreference(api: Client, subscriberId: string, workflowId: string) {
  const res = await api.get(`/v1/subscribers/${subscriberId}/preferences`);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json().data as Preference[]).find((p) => p.template._id === workflowId)?.preference;
}

forEachBackend("Novu's <Inbox /> (@novu/react 3) against Tidings, in Chromium", (ctx) => {
  let browser: Browser | undefined;
  let base = "";
  before(async () => {
    if (skip) return;
    // The API on "localhost", the page on 127.0.0.1: two origins, as a real embed.
    const address = await ctx.app.listen({ port: 0, host: "127.0.0.1" });
    base = address.replace("127.0.0.1", "localhost");
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  test("live count on the bell, the popover, read, archive to the Archived view, a channel switched in the preferences", {
    skip,
  }, async () => {
    assert.ok(browser);
    const tenant = await ctx.tenant();
    const api = ctx.client(tenant.dev.apiKey);
    const workflowName = uniqueName("Shipping");
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: workflowName,
      active: true,
      steps: [
        { template: { type: "in_app", content: "Order {{n}} shipped" } },
        { template: { type: "email", subject: "Order {{n}}", content: "Order {{n}} shipped" } },
      ],
    });
    const subscriberId = `shopper-${randomBytes(4).toString("hex")}`;
    const trigger = async (n: number) => {
      const res = await api.post("/v1/events/trigger", {
        name: workflow.triggers[0].identifier,
        to: subscriberId,
        payload: { n },
      });
      assert.equal(res.statusCode, 201, res.body);
    };

    const { context, cloud } = await isolatedContext(browser);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const problems = watchProblems(page);
    let navigations = 0;
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    // The socket to Tidings, and whether socket.io has accepted it (its CONNECT answer, "40").
    const sockets: string[] = [];
    let socketConnected = false;
    page.on("websocket", (socket) => {
      sockets.push(socket.url());
      socket.on("framereceived", ({ payload }) => {
        if (String(payload).startsWith("40")) socketConnected = true;
      });
    });
    try {
      const query = new URLSearchParams({
        api: base,
        app: await applicationIdentifierOf(api),
        subscriber: subscriberId,
        // Computed on the customer's server, with the environment's secret key.
        hash: subscriberHash(tenant.dev.apiKey, subscriberId),
      });
      await page.goto(`${customerPage.origin()}/?${query}`);
      const bell = (count: number) =>
        page.getByRole("button", { name: `Notifications ${count}`, exact: true });
      await step(page, "the bell with nothing unread", () => bell(0).waitFor());
      await poll(() => socketConnected, Boolean, { what: "the inbox's socket to be connected" });

      // Two notifications while the page is open: the socket brings them, no reload.
      await trigger(1);
      await step(page, "the bell counting the first notification", () => bell(1).waitFor());
      await trigger(2);
      await step(page, "the bell counting the second", () => bell(2).waitFor());

      await bell(2).click();
      const item = (text: string) => page.locator(".nv-notification").filter({ hasText: text });
      await step(page, "the popover's notifications", async () => {
        await item("Order 2 shipped").waitFor();
        await item("Order 1 shipped").waitFor();
      });
      assert.deepEqual(await seriousViolations(page), [], "axe on the open inbox");

      // Read through the notification's own button: the count goes down, and the API agrees.
      await step(page, "mark the first as read", async () => {
        await item("Order 1 shipped").hover();
        await item("Order 1 shipped").getByRole("button", { name: "Mark as read" }).click();
        await bell(1).waitFor();
      });
      const feed = await poll(
        async () =>
          (await api.get(`/v1/subscribers/${subscriberId}/notifications/feed`)).json().data as {
            content: string;
            read: boolean;
          }[],
        (messages) => messages.some((m) => m.content === "Order 1 shipped" && m.read),
        { what: "the API to report the first notification read" },
      );
      assert.equal(feed.find((m) => m.content === "Order 2 shipped")?.read, false);

      // Archive: out of the feed (and the count), into the Archived view.
      await step(page, "archive the second", async () => {
        await item("Order 2 shipped").hover();
        await item("Order 2 shipped").getByRole("button", { name: "Archive" }).click();
        await item("Order 2 shipped").waitFor({ state: "detached" });
        await bell(0).waitFor();
      });
      assert.equal(await item("Order 1 shipped").count(), 1, "the read one stays in the feed");
      await step(page, "the Archived view", async () => {
        await page.getByRole("button", { name: "Inbox", exact: true }).click();
        await page.getByRole("button", { name: "Archived" }).click();
        await item("Order 2 shipped").waitFor();
        await item("Order 1 shipped").waitFor({ state: "detached" });
      });
      assert.deepEqual(await seriousViolations(page), [], "axe on the Archived view");

      // The preferences panel: the workflow's Email off, then on again; the API follows each time.
      const before = await workflowPreference(api, subscriberId, workflow._id);
      assert.equal(before?.channels.email, true, JSON.stringify(before));
      await page.getByRole("button", { name: "Preferences" }).click();
      const email = page
        .locator(".nv-workflowContainer")
        .filter({ hasText: workflowName })
        .getByRole("checkbox", { name: "Email" });
      for (const on of [false, true]) {
        await step(page, `the workflow's Email ${on ? "on" : "off"}`, async () => {
          // The switch as a keyboard user works it: focused, then Space.
          await email.focus();
          await page.keyboard.press("Space");
          await poll(
            () => workflowPreference(api, subscriberId, workflow._id),
            (preference) => preference?.channels.email === on,
            { what: `the API to report the workflow's email ${on ? "on" : "off"}` },
          );
          assert.equal(await email.isChecked(), on);
        });
      }
      const after = await workflowPreference(api, subscriberId, workflow._id);
      assert.equal(after?.channels.in_app, true, "the other channel is left alone");
      // The panel's weekly schedule is the component's own markup: axe's findings there (its
      // switches have no label; its header, a button, holds other controls, among them an icon-only
      // tooltip button that an icon of the page's cannot name without contradicting the header's
      // label) are none of the page's, nor of what Tidings answers. Anything else fails.
      const preferences = await seriousViolations(page);
      assert.deepEqual(
        preferences.filter(
          (v) =>
            !/^critical label: \.nv-schedule\w+\S* > .*\.nv-channelSwitch\S* > input$/.test(v) &&
            !/^critical button-name: \.nv-tooltipTrigger$/.test(v) &&
            !/^serious nested-interactive: \.nv-scheduleHeader$/.test(v),
        ),
        [],
        `axe on the preferences panel:\n${preferences.join("\n")}`,
      );

      assert.equal(navigations, 1, "the page was never reloaded");
      assert.ok(
        sockets.some((url) => url.startsWith(`${base.replace("http", "ws")}/socket.io/`)),
        `the component held its socket with Tidings: ${sockets.join(", ")}`,
      );
      assert.deepEqual(cloud, [], "nothing went to Novu's cloud");
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test("what the README warns of: `apiUrl` is not a prop of <Inbox />, and without `socketUrl` the socket goes to Novu's cloud", {
    skip,
  }, async () => {
    assert.ok(browser);
    const tenant = await ctx.tenant();
    const api = ctx.client(tenant.dev.apiKey);
    const subscriberId = `reader-${randomBytes(4).toString("hex")}`;
    const app = await applicationIdentifierOf(api);
    const open = async (extra: Record<string, string>) => {
      assert.ok(browser);
      const { context, cloud } = await isolatedContext(browser);
      const page = await context.newPage();
      const requests: string[] = [];
      page.on("request", (request) => requests.push(`${request.method()} ${request.url()}`));
      const query = new URLSearchParams({
        api: base,
        app,
        subscriber: subscriberId,
        hash: subscriberHash(tenant.dev.apiKey, subscriberId),
        ...extra,
      });
      await page.goto(`${customerPage.origin()}/?${query}`);
      return { context, cloud, requests };
    };

    // `apiUrl` (what `new Novu()` takes) is dropped by <Inbox />: the session is asked of Novu's API.
    const wrongProp = await open({ url: "apiUrl" });
    try {
      await poll(
        () => wrongProp.cloud,
        (cloud) => cloud.length > 0,
        {
          what: "the page to call Novu's cloud",
        },
      );
      assert.ok(
        wrongProp.cloud.every((c) => c === "POST https://api.novu.co/v1/inbox/session"),
        wrongProp.cloud.join("\n"),
      );
      assert.ok(!wrongProp.requests.some((r) => r.includes(base)), wrongProp.requests.join("\n"));
    } finally {
      await wrongProp.context.close();
    }

    // No `socketUrl`: the session is Tidings', and its token is handed to Novu's socket service.
    const noSocket = await open({ socket: "none" });
    try {
      await poll(
        () => noSocket.cloud,
        (cloud) => cloud.some((c) => c.startsWith("WS ")),
        {
          what: "the page to open a socket to Novu's cloud",
        },
      );
      assert.ok(noSocket.requests.includes(`POST ${base}/v1/inbox/session`), noSocket.requests.join("\n"));
      const socket = noSocket.cloud.find((c) => c.startsWith("WS ")) as string;
      assert.match(socket, /^WS wss:\/\/socket\.novu\.co\/.*[?&]token=[\w-]+\.[\w-]+\.[\w-]+/);
    } finally {
      await noSocket.context.close();
    }
  });
});
