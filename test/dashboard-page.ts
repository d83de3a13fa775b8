// What the dashboard's browser tests share: the dashboard built from the current sources into a
// directory of the file's own (dist/ is left alone), axe-core's check of a page, and the page's
// console problems. The Chromium itself comes from test/browser-page.ts.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import type { Page } from "playwright-core";

const repo = path.resolve(import.meta.dirname, "..");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Registers the hooks that build the dashboard (unless `skip`) into a new directory, and remove it
 * afterwards; returns the directory, for the app's `dashboardDir`. TEST_DASHBOARD_DIR names one
 * built beforehand from the same sources (by scripts/run-tests.mjs), which every file then shares.
 */
export function buildDashboard(skip: string | false): string {
  // A dashboard built once for the whole run (npm test builds it before the suite): used as it is.
  const prebuilt = process.env.TEST_DASHBOARD_DIR;
  if (prebuilt) return prebuilt;
  const outDir = mkdtempSync(path.join(os.tmpdir(), "tidings-dashboard-"));
  before(() => {
    if (skip) return;
    const built = spawnSync(
      process.execPath,
      [path.join(repo, "node_modules/vite/bin/vite.js"), "build", "dashboard"],
      { cwd: repo, env: { ...process.env, DASHBOARD_OUT_DIR: outDir }, encoding: "utf8" },
    );
    assert.equal(built.status, 0, `vite build failed:\n${built.stdout}\n${built.stderr}`);
  });
  after(() => rmSync(outDir, { recursive: true, force: true }));
  return outDir;
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function assertAccessible(page: Page, view: string) {
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

/** The page's console errors and uncaught errors, as they come. */
export function consoleProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  return problems;
}
