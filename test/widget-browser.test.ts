// Novu's own inbox component (@novu/notification-center 2.0, React), unchanged, in a customer's page
// on another origin, against Tidings: the page (test/widget-page) is bundled here with esbuild and
// opened in Debian's Chromium through playwright-core, on both backends. It must show the feed and
// the unseen badge, and update live over the socket when a message arrives or is read elsewhere.
// Without a Chromium this is skipped, loudly; REQUIRE_BROWSER=1 makes that a failure.
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser } from "playwright-core";
import { browserSkip, launchChromium, servePage } from "./browser-page.ts";
import { createWorkflow, uniqueName } from "./factories.ts";
import { type Client, forEachBackend } from "./harness.ts";
import { poll } from "./poll.ts";

const skip = browserSkip("INBOX WIDGET BROWSER TESTS");
// The customer's page: its own origin (a port of its own), serving the bundle.
const customerPage = servePage(path.resolve(import.meta.dirname, "widget-page"), skip);

async function identifierOf(api: Client): Promise<string> {
  return (await api.get("/v1/environments/me")).json().data.identifier as string;
}

forEachBackend("Novu's inbox component against Tidings, in Chromium", (ctx) => {
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

  test("the bell shows the unseen count, the popover the feed; a new message and a read elsewhere show up live", {
    skip,
  }, async () => {
    assert.ok(browser);
    const tenant = await ctx.tenant();
    const api = ctx.client(tenant.dev.apiKey);
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Shipping"),
      active: true,
      steps: [{ template: { type: "in_app", content: "Order {{n}} shipped" } }],
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
    await trigger(1);

    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    const requests: string[] = [];
    page.on("request", (request) => requests.push(`${request.method()} ${request.url()}`));
    const sockets: string[] = [];
    page.on("websocket", (socket) => sockets.push(socket.url()));
    try {
      const query = new URLSearchParams({
        api: base,
        app: await identifierOf(api),
        subscriber: subscriberId,
      });
      await page.goto(`${customerPage.origin()}/?${query}`);
      const bell = page.getByTestId("bell");
      await bell.and(page.locator('[data-unseen="1"]')).waitFor();

      await page.getByTestId("bell").click();
      await page.getByText("Order 1 shipped").waitFor();

      // A new message arrives while the page is open: the socket brings it, no reload.
      await trigger(2);
      await page.getByText("Order 2 shipped").waitFor();
      await page.locator('[data-testid="bell"][data-unseen="2"]').waitFor({ state: "attached" });

      // Read everything through the API (another device): the badge follows over the socket.
      const marked = await api.post(`/v1/subscribers/${subscriberId}/messages/mark-all`, { markAs: "read" });
      assert.equal(marked.statusCode, 201, marked.body);
      await page.locator('[data-testid="bell"][data-unseen="0"]').waitFor({ state: "attached" });

      assert.ok(
        requests.some((r) => r.startsWith(`POST ${base}/v1/widgets/session/initialize`)),
        "the component started its session with Tidings",
      );
      assert.ok(
        sockets.some((url) => url.startsWith(base.replace("http", "ws")) && url.includes("/socket.io/")),
        `and held a socket with it: ${sockets.join(", ")}`,
      );
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test("with HMAC on (Production), the component's subscriberHash opens the session; a wrong one shows nothing", {
    skip,
  }, async () => {
    assert.ok(browser);
    const tenant = await ctx.tenant();
    const prod = ctx.client(tenant.prod.apiKey);
    const workflow = await createWorkflow(ctx, tenant.prod.apiKey, tenant.prod.generalGroupId, {
      name: uniqueName("Receipts"),
      active: true,
      steps: [{ template: { type: "in_app", content: "Receipt {{n}}" } }],
    });
    const subscriberId = `buyer-${randomBytes(4).toString("hex")}`;
    const res = await prod.post("/v1/events/trigger", {
      name: workflow.triggers[0].identifier,
      to: subscriberId,
      payload: { n: 7 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const app = await identifierOf(prod);
    const open = async (hash: string) => {
      const page = await browser?.newPage();
      assert.ok(page);
      page.setDefaultTimeout(15_000);
      const errors: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(message.text());
      });
      await page.goto(
        `${customerPage.origin()}/?${new URLSearchParams({ api: base, app, subscriber: subscriberId, hash })}`,
      );
      return { page, errors };
    };

    const right = await open(createHmac("sha256", tenant.prod.apiKey).update(subscriberId).digest("hex"));
    try {
      await right.page.locator('[data-testid="bell"][data-unseen="1"]').waitFor({ state: "attached" });
      await right.page.getByTestId("bell").click();
      await right.page.getByText("Receipt 7").waitFor();
      assert.deepEqual(right.errors, []);
    } finally {
      await right.page.close();
    }

    const wrong = await open("00".repeat(32));
    try {
      await poll(
        () => wrong.errors.join("\n"),
        (errors) => /Failed to initialize the session/.test(errors),
        { what: "the page to fail to start its session", limitMs: 15_000, everyMs: 50 },
      );
      assert.ok(
        wrong.errors.some((e) => /Failed to initialize the session.*400.*hmacHash/.test(e)),
        wrong.errors.join("\n"),
      );
      assert.equal(await wrong.page.getByText("Receipt 7").count(), 0);
    } finally {
      await wrong.page.close();
    }
  });
});
