// What the browser tests of a customer's page share: Debian's Chromium (skipped loudly when absent,
// a failure under REQUIRE_BROWSER=1), and the page itself, bundled with esbuild from a folder under
// test/ and served on an origin of its own, as a customer's site would be.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { build } from "esbuild";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
const requireBrowser = process.env.REQUIRE_BROWSER === "1";

/** Why `what` is skipped (no Chromium, and none required), or false; says so loudly either way. */
export function browserSkip(what: string): string | false {
  if (!haveBrowser) {
    const line = "!".repeat(100);
    console.warn(
      `\n${line}\n!! ${what} ${requireBrowser ? "FAIL" : "SKIPPED"}: no Chromium at ${CHROMIUM}` +
        "\n!! (apt-get install -y chromium, or set CHROMIUM_PATH; REQUIRE_BROWSER=1 turns this skip into a failure)" +
        `\n${line}\n`,
    );
  }
  return !haveBrowser && !requireBrowser ? `no Chromium at ${CHROMIUM}` : false;
}

/**
 * Headless Chromium; fails, naming the path, when there is none (REQUIRE_BROWSER=1). Under `npm
 * test` the run's one browser (scripts/run-tests.mjs launches it with these arguments and names it
 * in TEST_BROWSER_WS): `close()` then closes this file's contexts and lets the browser be.
 */
export function launchChromium(): Promise<Browser> {
  if (!haveBrowser) throw new Error(`REQUIRE_BROWSER=1 and no Chromium at ${CHROMIUM}`);
  const shared = process.env.TEST_BROWSER_WS;
  if (shared) return chromium.connect(shared);
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}

/**
 * Registers the file's hooks that bundle `<pageDir>/main.tsx` and serve it with `index.html` on
 * 127.0.0.1 (a port of its own), and close it afterwards; `origin()` is its address once up.
 */
export function servePage(pageDir: string, skip: string | false): { origin(): string } {
  const outDir = mkdtempSync(path.join(os.tmpdir(), `tidings-${path.basename(pageDir)}-`));
  let server: http.Server | undefined;
  let origin = "";
  before(async () => {
    if (skip) return;
    await build({
      entryPoints: [path.join(pageDir, "main.tsx")],
      outfile: path.join(outDir, "bundle.js"),
      bundle: true,
      minify: true,
      jsx: "automatic",
      target: "es2020",
      define: { "process.env.NODE_ENV": '"production"', global: "window" },
      logLevel: "silent",
    });
    const files: Record<string, [string, Buffer]> = {
      "/": ["text/html", readFileSync(path.join(pageDir, "index.html"))],
      "/bundle.js": ["text/javascript", readFileSync(path.join(outDir, "bundle.js"))],
    };
    server = http.createServer((req, res) => {
      const url = (req.url ?? "/").split("?")[0] as string;
      if (url === "/favicon.ico") {
        res.writeHead(204).end();
        return;
      }
      const file = files[url];
      if (!file) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": file[0] }).end(file[1]);
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    rmSync(outDir, { recursive: true, force: true });
  });
  return { origin: () => origin };
}
