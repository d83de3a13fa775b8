// Runs every *.test.ts under src/ and test/ with Node's own test runner (through tsx, so the
// TypeScript is run as written). Extra arguments are passed on: npm test -- --test-name-pattern=x
import { spawn } from "node:child_process";
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
// A hang must fail the run, not stall it: every test gets a deadline, each file's process exits
// once its tests are done (a leaked handle would otherwise keep it alive for as long as the handle
// lives), and the whole run has a deadline of its own (TEST_RUN_TIMEOUT_S, 10 minutes by default),
// after which the runner and every process under it are killed.
const runTimeoutS = Number(process.env.TEST_RUN_TIMEOUT_S ?? 600);
const child = spawn(
  process.execPath,
  [
    "--import",
    "tsx",
    "--test",
    "--test-reporter=spec",
    "--test-concurrency=2",
    "--test-timeout=240000",
    "--test-force-exit",
    ...flags,
    ...files,
  ],
  // Its own process group, so that everything it started can be stopped together.
  { stdio: "inherit", env: process.env, detached: true },
);
const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
};
const deadline = setTimeout(() => {
  console.error(`\nthe test run did not end within ${runTimeoutS} s: stopping it and everything it started`);
  killGroup("SIGKILL");
  process.exit(1);
}, runTimeoutS * 1000);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    killGroup(signal);
    setTimeout(() => killGroup("SIGKILL"), 5000).unref();
  });
}
child.on("exit", (code, signal) => {
  clearTimeout(deadline);
  // Whatever a test file left running in the group goes with the run.
  killGroup("SIGKILL");
  process.exit(code ?? (signal ? 1 : 0));
});
