// The dashboard's Layouts page in Debian's Chromium, on both backends: a layout made with New layout
// is listed, its content edited with the sandboxed preview following, made the default, its delete
// refused while it is (the API's reason shown as an alert), and chosen as an email step's Layout in
// the workflow editor, the API then holding the step's `_layoutId`. Controls are found by role and
// name; axe-core finds nothing serious or critical; the console stays clean. One browser for the
// file, one page per backend; without Chromium the file is skipped loudly (REQUIRE_BROWSER=1: a failure).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { browserSkip, launchChromium } from "./browser-page.ts";
import { assertAccessible, buildDashboard, consoleProblems } from "./dashboard-page.ts";
import { createWorkflow, uniqueName } from "./factories.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";

const skip = browserSkip("DASHBOARD LAYOUTS BROWSER TESTS");
const outDir = buildDashboard(skip);
let browser: Browser | undefined;
before(async () => {
  if (!skip) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

test("the dashboard's files stay within 100 kB gzipped with the Layouts page", { skip }, () => {
  const assets = path.join(outDir, "assets");
  const sizes = readdirSync(assets).map((name) => gzipSync(readFileSync(path.join(assets, name))).length);
  const total = sizes.reduce((sum, size) => sum + size, 0);
  assert.ok(total > 0 && total <= 100_000, `${total} bytes gzipped`);
});

forEachBackend(
  "dashboard: layouts",
  (ctx) => {
    describe("in a browser", { skip }, () => {
      let page: Page;
      let problems: string[];
      let base: string;
      let tenant: TestTenant;
      const api = () => ctx.client(tenant.dev.apiKey);

      before(async () => {
        assert.ok(browser);
        base = await ctx.app.listen({ port: 0, host: "127.0.0.1" });
        tenant = await ctx.tenant();
        page = await browser.newPage();
        page.setDefaultTimeout(15_000);
        problems = consoleProblems(page);
        page.on("dialog", (dialog) => dialog.accept());
        await page.goto(`${base}/dashboard/`);
        await page.evaluate((key) => sessionStorage.setItem("tidings.apiKey", key), tenant.dev.apiKey);
        await page.reload();
        await page.getByRole("heading", { name: "Workflows", exact: true }).waitFor();
      });
      after(async () => {
        await page?.close();
      });

      const name = uniqueName("Brand frame");
      const identifier = `brand-${Date.now()}`;
      let layoutId = "";

      test("New layout, listed; its content edited with the preview following; Make default; Delete refused for the default, with the API's reason", async () => {
        await page.getByRole("link", { name: "Layouts", exact: true }).click();
        await page.getByRole("heading", { name: "Layouts", level: 1 }).waitFor();
        await page.getByRole("button", { name: "New layout" }).click();
        await page.getByRole("textbox", { name: "Name" }).fill(name);
        await page.getByRole("textbox", { name: "Identifier" }).fill(identifier);
        await page
          .getByRole("textbox", { name: "Content" })
          .fill('<main><h2 id="top">Frame top</h2>{{{body}}}<footer>Frame foot</footer></main>');
        await assertAccessible(page, "new layout");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("heading", { name: `Layout ${name}`, level: 1 }).waitFor();
        layoutId = decodeURIComponent(page.url().split("#/layouts/")[1] ?? "");
        const made = (await api().get(`/v1/layouts/${layoutId}`)).json().data;
        assert.deepEqual([made.name, made.identifier, made.isDefault], [name, identifier, false]);

        // The preview: the layout around a sample paragraph, in a frame that runs nothing.
        const frame = page.getByTitle("Preview");
        assert.equal(await frame.getAttribute("sandbox"), "");
        const preview = frame.contentFrame();
        await preview.getByRole("heading", { name: "Frame top" }).waitFor();
        await preview.getByText("This sample paragraph", { exact: false }).waitFor();
        // Edited: the preview follows as typed, before any save.
        const content = page.getByRole("textbox", { name: "Content" });
        await content.fill(
          '<section><h2>Fresh header</h2>{{{body}}}<script>document.title = "ran"</script></section>',
        );
        await preview.getByRole("heading", { name: "Fresh header" }).waitFor();
        assert.equal(await preview.getByRole("heading", { name: "Frame top" }).count(), 0);
        await preview.getByText("This sample paragraph", { exact: false }).waitFor();
        assert.equal(await preview.locator("title").count(), 0, "the script did not run");
        await assertAccessible(page, "layout");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("status").filter({ hasText: "Layout saved." }).waitFor();
        assert.match((await api().get(`/v1/layouts/${layoutId}`)).json().data.content, /Fresh header/);

        // Listed, with its identifier; not the default yet.
        await page.getByRole("link", { name: "Back to layouts" }).click();
        const row = page.getByRole("row").filter({ hasText: identifier });
        await row.getByRole("link", { name }).waitFor();
        assert.equal(await row.getByText("Default", { exact: true }).count(), 0);
        await assertAccessible(page, "layouts");

        // Made the default: marked so in the list; the API agrees.
        await row.getByRole("link", { name }).click();
        await page.getByRole("button", { name: "Make default" }).click();
        await page.getByRole("status").filter({ hasText: "This is now the default layout." }).waitFor();
        assert.equal((await api().get(`/v1/layouts/${layoutId}`)).json().data.isDefault, true);
        assert.equal(await page.getByRole("button", { name: "Make default" }).count(), 0);

        // The default cannot be deleted: the API's reason is shown, and the layout stays.
        await page.getByRole("button", { name: "Delete" }).click();
        await page
          .getByRole("alert")
          .filter({ hasText: "is being used as your default layout, so it can not be deleted" })
          .waitFor();
        assert.equal((await api().get(`/v1/layouts/${layoutId}`)).statusCode, 200);
        await page.getByRole("link", { name: "Back to layouts" }).click();
        await page
          .getByRole("row")
          .filter({ hasText: identifier })
          .getByText("Default", { exact: true })
          .waitFor();
      });

      test("an email step's Layout: the environment default or a layout, stored as its _layoutId and kept by a save that changes nothing", async () => {
        assert.ok(layoutId, "the layout of the test above");
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Framed"),
          steps: [{ template: { type: "email", subject: "Hello", content: "<p>Hi</p>" } }],
        });
        const template = async () =>
          (await api().get(`/v1/workflows/${workflow._id}`)).json().data.steps[0].template as Record<
            string,
            unknown
          >;
        await page.goto(`${base}/dashboard/#/workflows/${workflow._id}`);
        await page.getByRole("heading", { name: `Edit workflow ${workflow.name}` }).waitFor();
        await page
          .getByRole("navigation", { name: "Flow" })
          .getByRole("button", { name: /^Step 1:/ })
          .click();
        const choice = page.getByRole("combobox", { name: "Layout" });
        await choice.getByRole("option", { name }).waitFor({ state: "attached" });
        assert.equal(await choice.inputValue(), "", "Environment default");
        assert.equal(await choice.locator("option:checked").textContent(), "Environment default");
        await choice.selectOption({ label: name });
        await assertAccessible(page, "email step with a layout");
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await page.getByRole("status").filter({ hasText: "Workflow saved." }).waitFor();
        assert.equal((await template())._layoutId, layoutId);

        // Opened again: the layout is chosen; a save that changes nothing keeps it.
        await page.reload();
        await page.getByRole("heading", { name: `Edit workflow ${workflow.name}` }).waitFor();
        await page
          .getByRole("navigation", { name: "Flow" })
          .getByRole("button", { name: /^Step 1:/ })
          .click();
        assert.equal(await page.getByRole("combobox", { name: "Layout" }).inputValue(), layoutId);
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await page.getByRole("status").filter({ hasText: "No changes to save." }).waitFor();
        const kept = await template();
        assert.deepEqual([kept._layoutId, kept.subject, kept.content], [layoutId, "Hello", "<p>Hi</p>"]);

        // Back to the environment's default: the step names no layout.
        await page.getByRole("combobox", { name: "Layout" }).selectOption({ label: "Environment default" });
        await page.getByRole("button", { name: "Save", exact: true }).click();
        await page.getByRole("status").filter({ hasText: "Workflow saved." }).waitFor();
        assert.equal((await template())._layoutId ?? null, null);
      });

      test("no console errors", () => {
        // Chromium logs a 4xx answer as a console error: the refused delete's 409 is the scenario; so
        // is the preview's refusal to run the layout's script, which it reports too.
        const sandboxed =
          /Blocked script execution in 'about:srcdoc' because the document's frame is sandboxed/;
        assert.ok(
          problems.some((p) => sandboxed.test(p)),
          "the layout's script was refused",
        );
        const unexpected = problems.filter(
          (p) => !/Failed to load resource: .* 409 \(Conflict\)$/.test(p) && !sandboxed.test(p),
        );
        assert.deepEqual(unexpected, []);
      });
    });
  },
  { app: () => ({ dashboardDir: outDir }) },
);
