// Runs every *.test.ts under src/ and test/ with Node's own test runner (through tsx, so the
// TypeScript is run as written). Extra arguments are passed on: npm test -- --test-name-pattern=x
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

const roots = ["src", "test"];
const skip = new Set(["node_modules", "dist", "data"]);

function find(dir, out) {
  for (const name of readdirSync(dir)) {
    if (skip.has(name)) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) find(full, out);
    else if (name.endsWith(".test.ts")) out.push(full);
  }
  return out;
}

const args = process.argv.slice(2);
const only = args.filter((a) => !a.startsWith("-"));
const flags = args.filter((a) => a.startsWith("-"));
const files = only.length > 0 ? only : roots.flatMap((root) => find(root, [])).sort();
if (files.length === 0) {
  console.error("no test files found");
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-reporter=spec", "--test-concurrency=2", ...flags, ...files],
  { stdio: "inherit", env: process.env },
);
process.exit(result.status ?? 1);
