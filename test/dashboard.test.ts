// The dashboard (dashboard/, served at /dashboard by src/ops/dashboard.ts) driven in a real browser:
// Debian's Chromium through playwright-core, against the app listening on a local port, on both
// backends. Without a Chromium the browser half is skipped, loudly; REQUIRE_BROWSER=1 makes that a
// failure. The headers half needs no browser.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { browserSkip, launchChromium } from "./browser-page.ts";
import { assertAccessible as axeCheck, buildDashboard, consoleProblems } from "./dashboard-page.ts";
import { createGroup, createSubscriber, createWorkflow, uniqueName } from "./factories.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";
import { poll } from "./poll.ts";

const skip = browserSkip("DASHBOARD BROWSER TESTS");
// The current sources, built into a directory of this run's own (dist/ is left alone).
const outDir = buildDashboard(skip);
// One browser for the file; each backend has a page of its own.
let browser: Browser | undefined;
before(async () => {
  if (!skip) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

forEachBackend(
  "dashboard",
  (ctx) => {
    const noBuild = skip ? "the dashboard is built only when a browser test runs" : false;
    test("/dashboard/ is the app, under the API's security headers and a policy allowing only its own files", {
      skip: noBuild,
    }, async () => {
      const page = await ctx.app.inject({ method: "GET", url: "/dashboard/" });
      assert.equal(page.statusCode, 200);
      assert.match(page.headers["content-type"] as string, /text\/html/);
      const csp = page.headers["content-security-policy"] as string;
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /style-src 'self'/);
      assert.match(csp, /connect-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      const api = await ctx.app.inject({ method: "GET", url: "/health" });
      for (const header of [
        "x-content-type-options",
        "strict-transport-security",
        "referrer-policy",
        "x-frame-options",
      ]) {
        assert.equal(page.headers[header], api.headers[header], header);
      }
      const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
      assert.ok(script, page.body);
      const asset = await ctx.app.inject({ method: "GET", url: script });
      assert.equal(asset.statusCode, 200);
      assert.match(asset.headers["cache-control"] as string, /immutable/);
      // /dashboard without the slash is the same page (redirected or served).
      const bare = await ctx.app.inject({ method: "GET", url: "/dashboard" });
      assert.ok([200, 301, 302].includes(bare.statusCode), String(bare.statusCode));
    });

    describe("in a browser", { skip }, () => {
      let page: Page;
      let base: string;
      let tenant: TestTenant;
      let problems: string[] = [];

      before(async () => {
        assert.ok(browser);
        base = await ctx.app.listen({ port: 0, host: "127.0.0.1" });
        tenant = await ctx.tenant();
        page = await browser.newPage();
        page.setDefaultTimeout(15_000);
        problems = consoleProblems(page);
      });
      after(async () => {
        await page?.close();
      });

      const assertAccessible = (view: string) => axeCheck(page, view);

      // Chromium logs every 4xx answer as a console error: the wrong key's 401 and the refused
      // deletion's 409 are the scenario; anything else (a script error, a refused policy) is not.
      const unexpected = () =>
        problems.filter(
          (p) => !/Failed to load resource: .* (401 \(Unauthorized\)|409 \(Conflict\))$/.test(p),
        );

      test("sign in: a wrong key is refused with an alert; the right one opens the workflows", async () => {
        await page.goto(`${base}/dashboard/`);
        await assertAccessible("sign-in");
        await page.getByRole("textbox", { name: "API key" }).fill("not-a-key");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("alert").waitFor();
        assert.match((await page.getByRole("alert").textContent()) ?? "", /not accepted/);

        await page.getByRole("textbox", { name: "API key" }).fill(tenant.dev.apiKey);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("heading", { name: "Workflows" }).waitFor();
        // The key is in this tab's sessionStorage: not in a cookie, not in the address.
        assert.equal(await page.evaluate(() => sessionStorage.getItem("tidings.apiKey")), tenant.dev.apiKey);
        assert.deepEqual(await page.context().cookies(), []);
        assert.ok(!page.url().includes(tenant.dev.apiKey));
      });

      test("a workflow's switch sets its status through the API, and the API agrees", async () => {
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Switched"),
        });
        assert.equal(workflow.active, false);
        await page.goto(`${base}/dashboard/#/workflows`);
        await page.reload();
        const toggle = page.getByRole("switch", { name: workflow.name });
        assert.equal(await toggle.getAttribute("aria-checked"), "false");
        // The keyboard works: focus and Space.
        await toggle.focus();
        await page.keyboard.press("Space");
        await page.getByRole("switch", { name: workflow.name, checked: true }).waitFor();
        const read = await ctx.client(tenant.dev.apiKey).get(`/v1/workflows/${workflow._id}`);
        assert.equal(read.json().data.active, true);
        await toggle.click();
        await page.getByRole("switch", { name: workflow.name, checked: false }).waitFor();
        const again = await ctx.client(tenant.dev.apiKey).get(`/v1/workflows/${workflow._id}`);
        assert.equal(again.json().data.active, false);
        await assertAccessible("workflows");
      });

      const groupName = uniqueName("Dashboard group");
      test("create a group", async () => {
        await page.getByRole("link", { name: "Groups", exact: true }).click();
        await page.getByRole("heading", { name: "Groups" }).waitFor();
        await page.getByRole("textbox", { name: "Name" }).fill(groupName);
        await page.getByRole("button", { name: "Create" }).click();
        await page.getByRole("button", { name: `Rename ${groupName}` }).waitFor();
        const groups = await ctx.client(tenant.dev.apiKey).get("/v1/notification-groups");
        assert.ok(groups.json().data.some((g: { name: string }) => g.name === groupName));
        await assertAccessible("groups");
      });

      test("a group in use is not deleted, and the page says why", async () => {
        const group = await createGroup(ctx, tenant.dev.apiKey);
        await createWorkflow(ctx, tenant.dev.apiKey, group._id);
        await page.reload();
        page.once("dialog", (dialog) => dialog.accept());
        await page.getByRole("button", { name: `Delete ${group.name}` }).click();
        await page.getByRole("alert").waitFor();
        assert.match((await page.getByRole("alert").textContent()) ?? "", /was not deleted/);
        const read = await ctx.client(tenant.dev.apiKey).get(`/v1/notification-groups/${group._id}`);
        assert.equal(read.statusCode, 200);
      });

      const workflowName = uniqueName("Dashboard workflow");
      test("create a workflow with an in-app step", async () => {
        await page.getByRole("link", { name: "Workflows", exact: true }).click();
        await page.getByRole("button", { name: "New workflow" }).click();
        await page.getByRole("heading", { name: "New workflow" }).waitFor();
        await page.getByRole("textbox", { name: "Name", exact: true }).fill(workflowName);
        await page.getByRole("combobox", { name: "Group" }).selectOption({ label: groupName });
        await page.getByRole("combobox", { name: "Severity" }).selectOption({ label: "High" });
        await page.getByRole("button", { name: "Add in-app step" }).click();
        await page.getByRole("textbox", { name: "Content" }).fill("Hello {{subscriber.firstName}}, {{name}}");
        await assertAccessible("workflow editor");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("status").filter({ hasText: "Workflow created." }).waitFor();
        const list = await ctx
          .client(tenant.dev.apiKey)
          .get(`/v1/workflows?query=${encodeURIComponent(workflowName)}`);
        const [created] = list.json().data;
        assert.equal(created.name, workflowName);
        assert.equal(created.severity, "high");
        assert.equal(created.steps.length, 1);
        assert.equal(created.steps[0].template.type, "in_app");
        assert.equal(created.steps[0].template.content, "Hello {{subscriber.firstName}}, {{name}}");
        const groups = (await ctx.client(tenant.dev.apiKey).get("/v1/notification-groups")).json().data;
        assert.equal(
          created._notificationGroupId,
          groups.find((g: { name: string }) => g.name === groupName)._id,
        );
      });

      test("a triggered notification shows in the activity, with its jobs as a timeline", async () => {
        const client = ctx.client(tenant.dev.apiKey);
        const list = await client.get(`/v1/workflows?query=${encodeURIComponent(workflowName)}`);
        const workflow = list.json().data[0];
        await client.put(`/v1/workflows/${workflow._id}/status`, { active: true });
        const subscriber = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Ada" });
        const trigger = await client.post("/v1/events/trigger", {
          name: workflow.triggers[0].identifier,
          to: { subscriberId: subscriber.subscriberId },
          payload: { name: "from the dashboard test" },
        });
        assert.equal(trigger.statusCode, 201, trigger.body);
        const { transactionId } = trigger.json().data;
        // The in-process worker runs the in-app step.
        await poll(
          async () =>
            (await client.get(`/v1/subscribers/${subscriber.subscriberId}/notifications/feed`)).json().data
              .length as number,
          (n) => n > 0,
          { what: "the in-app message", limitMs: 15_000, everyMs: 100 },
        );

        await page.getByRole("link", { name: "Activity", exact: true }).click();
        await page.getByRole("heading", { name: "Activity" }).waitFor();
        await page.getByRole("textbox", { name: "Transaction id" }).fill(transactionId);
        await page.getByRole("button", { name: "Filter" }).click();
        const row = page.getByRole("row").filter({ hasText: transactionId });
        await row.waitFor();
        assert.match((await row.textContent()) ?? "", new RegExp(workflowName));
        await assertAccessible("activity");
        await row.getByRole("link").click();
        await page.getByRole("heading", { name: `Notification of ${workflowName}` }).waitFor();
        const details = page.getByRole("list", { name: /Execution details of/ });
        await details.first().waitFor();
        assert.ok((await details.first().getByRole("listitem").count()) > 0);
        await assertAccessible("notification");

        await page.getByRole("link", { name: subscriber.subscriberId }).click();
        await page.getByRole("heading", { name: `Subscriber ${subscriber.subscriberId}` }).waitFor();
        await page.getByText("Hello Ada, from the dashboard test").waitFor();
        await assertAccessible("subscriber");
        await page.getByRole("link", { name: "Subscribers", exact: true }).click();
        await page.getByRole("link", { name: subscriber.subscriberId }).waitFor();
        await assertAccessible("subscribers");
      });

      test("subscribers: the search asks the API (beyond the page shown); a subscriber's page shows its fields, feed and preferences", async () => {
        const client = ctx.client(tenant.dev.apiKey);
        // More subscribers than one page (20) holds, the one sought made last: the list is oldest
        // first, so it is not on the first page, and only the API's search can find it.
        for (let i = 0; i < 22; i++) await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Filler" });
        const sought = await createSubscriber(ctx, tenant.dev.apiKey, {
          subscriberId: `needle-${Date.now()}`,
          firstName: "Grace",
          lastName: "Hopper",
          email: "grace@navy.example",
        });
        await page.getByRole("link", { name: "Subscribers", exact: true }).click();
        await page.reload();
        await page.getByRole("heading", { name: "Subscribers" }).waitFor();
        await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 20);
        assert.equal(await page.getByRole("link", { name: sought.subscriberId }).count(), 0, "not on page 1");
        // A first search whose answer the network holds back until the second one has been shown:
        // arriving last, the older answer must not replace the newer one.
        const isHeld = (url: URL) =>
          url.pathname === "/v1/subscribers" && url.searchParams.get("search") === "Filler";
        let release = () => {};
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        let held = () => {};
        const heldSeen = new Promise<void>((resolve) => {
          held = resolve;
        });
        await page.route(isHeld, async (route) => {
          held();
          await released;
          await route.continue();
        });
        const searchbox = page.getByRole("searchbox", { name: "Search subscribers" });
        await searchbox.fill("Filler");
        await heldSeen;
        await searchbox.fill("HOPPER");
        const rows = page.getByRole("table").getByRole("row");
        await page.getByRole("link", { name: sought.subscriberId }).waitFor();
        await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
        const lateAnswer = page.waitForResponse((res) => isHeld(new URL(res.url())));
        release();
        await (await lateAnswer).finished();
        const replaced = await page
          .waitForFunction(() => document.querySelectorAll("tbody tr").length !== 1, null, { timeout: 1_000 })
          .then(
            () => true,
            () => false,
          );
        await page.unroute(isHeld);
        assert.equal(replaced, false, "the older search's answer, arriving last, replaced the newer one");
        assert.equal(await rows.count(), 2, "the header and the one match");
        assert.equal(await page.getByRole("link", { name: sought.subscriberId }).count(), 1);
        await assertAccessible("subscribers, searched");

        // Its page: fields, feed and preferences, with a workflow that reached it.
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Search workflow"),
          active: true,
          steps: [{ template: { type: "in_app", content: "Welcome aboard, {{subscriber.firstName}}" } }],
        });
        await client.post("/v1/events/trigger", {
          name: workflow.triggers[0].identifier,
          to: sought.subscriberId,
        });
        await page.getByRole("link", { name: sought.subscriberId }).click();
        await page.getByRole("heading", { name: `Subscriber ${sought.subscriberId}` }).waitFor();
        await page.getByText("grace@navy.example").waitFor();
        await page.reload();
        await page.getByText("Welcome aboard, Grace").waitFor();
        await page.getByRole("heading", { name: "Preferences" }).waitFor();
        await page.getByRole("cell", { name: workflow.name }).waitFor();
        await assertAccessible("subscriber page");
      });

      test("activity: filters by workflow and by subscriber narrow the list", async () => {
        const client = ctx.client(tenant.dev.apiKey);
        const make = (name: string) =>
          createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
            name: uniqueName(name),
            active: true,
            steps: [{ template: { type: "in_app", content: name } }],
          });
        const [first, second] = [await make("Filter one"), await make("Filter two")];
        const ada = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Ada" });
        const bob = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Bob" });
        const sent: Record<string, string> = {};
        for (const [workflow, subscriber] of [
          [first, ada],
          [second, ada],
          [first, bob],
        ] as const) {
          const res = await client.post("/v1/events/trigger", {
            name: workflow.triggers[0].identifier,
            to: subscriber.subscriberId,
          });
          sent[`${workflow.name}|${subscriber.subscriberId}`] = res.json().data.transactionId;
        }
        await page.getByRole("link", { name: "Activity", exact: true }).click();
        await page.getByRole("heading", { name: "Activity" }).waitFor();
        const filter = async (workflow: string, subscriber: string) => {
          await page
            .getByRole("combobox", { name: "Workflow" })
            .selectOption({ label: workflow || "Any workflow" });
          await page.getByRole("textbox", { name: "Subscriber id" }).fill(subscriber);
          await page.getByRole("textbox", { name: "Transaction id" }).fill("");
          await page.getByRole("button", { name: "Filter" }).click();
        };
        const shown = async (expected: string[]) => {
          await page.waitForFunction((txs) => {
            const text = document.querySelector("tbody")?.textContent ?? "";
            return (
              txs.every((tx) => text.includes(tx)) &&
              document.querySelectorAll("tbody tr").length === txs.length
            );
          }, expected);
        };
        await page.reload();
        await filter(first.name, "");
        await shown([
          sent[`${first.name}|${ada.subscriberId}`],
          sent[`${first.name}|${bob.subscriberId}`],
        ] as string[]);
        await filter("", ada.subscriberId);
        await shown([
          sent[`${first.name}|${ada.subscriberId}`],
          sent[`${second.name}|${ada.subscriberId}`],
        ] as string[]);
        await filter(second.name, ada.subscriberId);
        await shown([sent[`${second.name}|${ada.subscriberId}`]] as string[]);
        await assertAccessible("activity, filtered");
      });

      test("integrations: add an SMTP one, switch it off and on with the API agreeing; its password is never in the page", async () => {
        const secret = `s3cret-${Date.now()}`;
        const name = uniqueName("Mail relay");
        await page.getByRole("link", { name: "Integrations", exact: true }).click();
        await page.getByRole("heading", { name: "Integrations" }).waitFor();
        await assertAccessible("integrations");
        await page.getByRole("combobox", { name: "Provider" }).selectOption("nodemailer");
        await page.getByRole("textbox", { name: "Integration name" }).fill(name);
        await page.getByRole("textbox", { name: "SMTP host" }).fill("smtp.example.com");
        await page.getByRole("textbox", { name: "SMTP user" }).fill("mailer");
        await page.getByLabel("SMTP password").fill(secret);
        await page.getByRole("textbox", { name: "From address" }).fill("hello@example.com");
        await page.getByRole("button", { name: "Add integration" }).click();
        const toggle = page.getByRole("switch", { name: `${name} active` });
        await toggle.waitFor();
        assert.equal(await toggle.getAttribute("aria-checked"), "true");
        const find = async () => {
          const list = (await ctx.client(tenant.dev.apiKey).get("/v1/integrations")).json().data;
          return list.find((i: { name: string }) => i.name === name) as {
            _id: string;
            active: boolean;
            credentials: Record<string, unknown>;
          };
        };
        const created = await find();
        assert.equal(created.active, true);
        assert.equal(created.credentials.host, "smtp.example.com");
        assert.equal(created.credentials.password, "********");
        await toggle.click();
        await page.getByRole("switch", { name: `${name} active`, checked: false }).waitFor();
        assert.equal((await find()).active, false);
        await toggle.focus();
        await page.keyboard.press("Space");
        await page.getByRole("switch", { name: `${name} active`, checked: true }).waitFor();
        assert.equal((await find()).active, true);
        await page.reload();
        await toggle.waitFor();
        assert.ok(!(await page.content()).includes(secret), "the password is nowhere in the page");
        await assertAccessible("integrations, with one");
      });

      test("groups: rename one", async () => {
        const group = await createGroup(ctx, tenant.dev.apiKey);
        const renamed = uniqueName("Renamed group");
        await page.getByRole("link", { name: "Groups", exact: true }).click();
        await page.getByRole("button", { name: `Rename ${group.name}` }).click();
        await page.getByRole("textbox", { name: `New name for ${group.name}` }).fill(renamed);
        await page.getByRole("button", { name: "Save name" }).click();
        await page.getByRole("button", { name: `Rename ${renamed}` }).waitFor();
        const read = await ctx.client(tenant.dev.apiKey).get(`/v1/notification-groups/${group._id}`);
        assert.equal(read.json().data.name, renamed);
      });

      test("workflows: edit one's name and content, then delete it", async () => {
        const client = ctx.client(tenant.dev.apiKey);
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Editable"),
          steps: [{ template: { type: "in_app", content: "Before" } }],
        });
        const renamed = uniqueName("Edited");
        await page.goto(`${base}/dashboard/#/workflows/${workflow._id}`);
        await page.getByRole("heading", { name: `Edit workflow ${workflow.name}` }).waitFor();
        await page.getByRole("textbox", { name: "Name", exact: true }).fill(renamed);
        await page.getByRole("textbox", { name: "Content" }).fill("After {{n}}");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("status").filter({ hasText: "Workflow saved." }).waitFor();
        const read = (await client.get(`/v1/workflows/${workflow._id}`)).json().data;
        assert.equal(read.name, renamed);
        assert.equal(read.steps[0].template.content, "After {{n}}");

        await page.getByRole("link", { name: "Workflows", exact: true }).click();
        page.once("dialog", (dialog) => dialog.accept());
        await page.getByRole("button", { name: `Delete ${renamed}` }).click();
        await page.getByRole("button", { name: `Delete ${renamed}` }).waitFor({ state: "detached" });
        assert.equal((await client.get(`/v1/workflows/${workflow._id}`)).statusCode, 404);
      });

      test("workflows: Publish to Production shows the diff, publishes after the confirmation, and the API agrees", async () => {
        const client = ctx.client(tenant.dev.apiKey);
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Promoted"),
        });
        const pending = (await client.post(`/v2/environments/${tenant.prod.environmentId}/diff`, {})).json()
          .data;
        const count = pending.resources.length + pending.notificationGroups.length + pending.layouts.length;
        assert.ok(count > 0);
        // Layouts are changes of their own: the default layout of onboarding, while Production lacks it.
        const layoutNames = pending.layouts.map((l: { sourceResource: { name: string } | null }) =>
          String(l.sourceResource?.name),
        );
        assert.ok(layoutNames.includes("Default Layout"), JSON.stringify(layoutNames));
        await page.goto(`${base}/dashboard/#/workflows`);
        await page.reload();
        await page.getByRole("button", { name: "Publish to Production…" }).click();
        const list = page.getByRole("list", { name: /will be published to Production/ });
        await list.waitFor();
        assert.equal(await list.getByRole("listitem").count(), count);
        assert.match((await list.textContent()) ?? "", new RegExp(`Workflow “${workflow.name}”: new`));
        for (const name of layoutNames)
          assert.match((await list.textContent()) ?? "", new RegExp(`Layout “${name}”`));
        // Nothing is published before the confirmation.
        assert.equal(
          (await ctx.client(tenant.prod.apiKey).get(`/v1/workflows/${workflow._id}`)).statusCode,
          404,
        );
        await assertAccessible("publish to production");
        await page.getByRole("button", { name: `Publish ${count} change${count === 1 ? "" : "s"}` }).click();
        await page
          .getByRole("status")
          .filter({ hasText: /^Published \d+ changes? to Production\.$/ })
          .waitFor();
        const copy = await ctx
          .client(tenant.prod.apiKey)
          .get(`/v1/workflows/${workflow.triggers[0].identifier}`);
        assert.equal(copy.json().data._parentId, workflow._id);
        await page.getByRole("button", { name: "Publish to Production…" }).click();
        await page.getByRole("status").filter({ hasText: "Production is up to date." }).waitFor();
      });

      test("no console errors on any view", () => {
        assert.deepEqual(unexpected(), []);
      });
    });
  },
  { app: () => ({ dashboardDir: outDir }) },
);
