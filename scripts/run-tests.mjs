// Runs every *.test.ts under src/ and test/ with Node's own test runner. Each test file, and the
// service's entry points that tests start as processes, is first bundled with esbuild (see
// scripts/test-build.mjs): loading a bundle costs a process about a second less than going through
// tsx's loader, and the suite starts some two hundred processes. Extra arguments are passed on:
// npm test -- --test-name-pattern=x
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildTests, TEST_BUILD_ENV } from "./test-build.mjs";

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
// The longest files start first, so that none of them begins near the end and runs on alone while
// the rest of the machine idles. A file's length is not known before it runs; what makes one long is
// known: real processes and browsers (seconds each) first, then the integration files under test/,
// then by size.
function weight(file) {
  const text = readFileSync(file, "utf8");
  const rank = /forEachProcessBackend|chromium|startServer\(|runTs\(/.test(text)
    ? 2
    : file.startsWith("test")
      ? 1
      : 0;
  return rank * 1e9 + text.length;
}
const files =
  only.length > 0
    ? only
    : roots
        .flatMap((root) => find(root, []))
        .map((file) => [file, weight(file)])
        .sort((a, b) => b[1] - a[1])
        .map(([file]) => file);
if (files.length === 0) {
  console.error("no test files found");
  process.exit(1);
}
// A hang must fail the run, not stall it. Each test file has a deadline (TEST_FILE_TIMEOUT_S, 300 s;
// node's --test-timeout applies to a whole file when files run in processes of their own), each
// file's process exits once its tests are done (a leaked handle would otherwise keep it alive for
// as long as the handle lives), and the whole run has a deadline (TEST_RUN_TIMEOUT_S, 1500 s), after
// which the runner and every process under it are killed.
function positive(name, fallback, unit) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    console.error(`${name} must be a whole number${unit} above 0, got "${raw}"`);
    process.exit(2);
  }
  return value;
}
const fileTimeoutS = positive("TEST_FILE_TIMEOUT_S", 300, " of seconds");
const runTimeoutS = positive("TEST_RUN_TIMEOUT_S", 1500, " of seconds");
// Test files run side by side (TEST_CONCURRENCY, 3): much of a file's time is spent waiting on
// child processes, fsyncs and the database, so one file more than this machine's two cores keeps
// both busy (the whole suite: 9m17s with 2, 8m57s with 3 under other work's load).
const concurrency = positive("TEST_CONCURRENCY", 3, "");
const built = await buildTests(files);
const child = spawn(
  process.execPath,
  [
    "--enable-source-maps",
    "--test",
    "--test-reporter=spec",
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${fileTimeoutS * 1000}`,
    "--test-force-exit",
    ...flags,
    ...built.files,
  ],
  // Its own process group, so that everything it started can be stopped together.
  { stdio: "inherit", env: { ...process.env, [TEST_BUILD_ENV]: built.dir }, detached: true },
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
// The group is detached from ours, so a signal to this wrapper reaches it only through here.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(signal, () => {
    killGroup(signal);
    setTimeout(() => killGroup("SIGKILL"), 5000).unref();
  });
}
child.on("exit", (code, signal) => {
  clearTimeout(deadline);
  // Whatever a test file left running in the group goes with the run.
  killGroup("SIGKILL");
  rmSync(built.dir, { recursive: true, force: true });
  process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
});
