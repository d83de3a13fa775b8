import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The node flags `npm start` runs the service with, read from package.json so that the benchmark
 * and the tests that spawn a server run it as shipped (e.g. its young-generation size, which bounds
 * peak RSS).
 */
export const SERVICE_NODE_FLAGS: string[] = (() => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  const words = pkg.scripts.start.split(/\s+/);
  return words.slice(words.indexOf("node") + 1).filter((w) => w.startsWith("--"));
})();
