// Runs every *.test.ts under src/ and test/ with Node's own test runner. Each test file, and the
// service's entry points that tests start as processes, is first bundled with esbuild (see
// scripts/test-build.mjs): loading a bundle costs a process about a second less than going through
// tsx's loader, and the suite starts some two hundred processes. Extra arguments are passed on:
// npm test -- --test-name-pattern=x
//
// Most files share a process with a few others (see `SHARED`): a process that loads the service's
// modules pays about 1.7 s of CPU before its first test, which over a hundred files was a fifth of
// the suite. Files that start processes or browsers, or touch what a process holds for everyone
// (its environment, its exit code), keep a process of their own.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import postgres from "postgres";
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
// known: the walks of every route first, then real processes and browsers (seconds each), then the
// integration files under test/, then by size.
const OWN_PROCESS =
  /forEachProcessBackend|engine-processes|startServer\(|runTs\(|startTs\(|spawn\(|fork\(|new Worker\(|browser-page|dashboard-page|chromium|process\.env\.[A-Z_]+ *=[^=]|process\.exitCode/;
// The files that walk every route of the catalog (each with fixtures of its own) take a minute or so
// of CPU each: in a group they would hold it past the others, so they run alone and start early.
const LONG = /makeFixtures/;
const found = (only.length > 0 ? only : roots.flatMap((root) => find(root, []))).map((file) => {
  const text = readFileSync(file, "utf8");
  const long = LONG.test(text);
  const alone = long || OWN_PROCESS.test(text);
  return {
    file,
    rank: long ? 3 : alone ? 2 : file.startsWith("test") ? 1 : 0,
    size: text.length,
    own: only.length > 0 || alone,
    showsDashboard: text.includes("dashboard-page"),
    usesBrowser: text.includes("launchChromium("),
  };
});
if (found.length === 0) {
  console.error("no test files found");
  process.exit(1);
}
found.sort((a, b) => b.rank - a.rank || b.size - a.size);

// The shared files, dealt into groups of about equal size (largest first, each to the lightest
// group so far): SHARED files to a group on average, enough groups left to keep every core busy.
const SHARED = 6;
const shared = found.filter((f) => !f.own);
const groups = Array.from({ length: Math.ceil(shared.length / SHARED) }, () => ({ files: [], size: 0 }));
for (const f of shared) {
  const lightest = groups.reduce((a, b) => (b.size < a.size ? b : a));
  lightest.files.push(f.file);
  lightest.size += f.size;
}
// A hang must fail the run, not stall it. Each test process (a file, or a group of shared files) has
// a deadline (TEST_FILE_TIMEOUT_S, 600 s; node's --test-timeout applies to all a process runs when
// files run in processes of their own), each process exits once its tests are done and their report
// is written out (EXIT_WHEN_DONE: a leaked handle would otherwise keep it alive for as long as the
// handle lives), and the whole run has a deadline (TEST_RUN_TIMEOUT_S, 1500 s), after which the runner
// and every process under it are killed.
//
// Not node's --test-force-exit: it calls process.exit() as soon as the process's last test ends, and
// what the process has not yet written of its report to the runner (a pipe) is lost. The runner then
// counts fewer tests than ran and passes all the same: one run here left out a group's last 12 tests
// with "fail 0" (nodejs/node#64833).
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
const fileTimeoutS = positive("TEST_FILE_TIMEOUT_S", 600, " of seconds");
const runTimeoutS = positive("TEST_RUN_TIMEOUT_S", 1500, " of seconds");
// Test processes run side by side (TEST_CONCURRENCY, 5): much of a process's time is spent waiting
// on the servers it started, on real timers, fsyncs, browsers and the database, so more of them
// than this machine's two cores keeps both busy.
const concurrency = positive("TEST_CONCURRENCY", 5, "");
// The run's mark, which the names of its PostgreSQL databases carry (test/backends.ts): the test
// processes leave their databases, and the run drops them all at its end. A drop makes PostgreSQL
// take a checkpoint, writing out what every test database changed; one per test file cost the server
// more than the tests' own queries.
const runMark = `r${Math.floor(Date.now() / 1000)}x${randomBytes(2).toString("hex")}`;
const RUN_DATABASE = /^tidings_(?:test|proc)_r(\d+)x[0-9a-f]{4}_/;

/** Drops the run databases `which` picks (by their name's match). */
async function dropRunDatabases(which) {
  const url = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  // Several at once (each waits for a checkpoint): 40 drops took 3.1 s so, 3.6 s one after another.
  const sql = postgres(url, { max: 8, onnotice: () => {}, connect_timeout: 5 });
  try {
    const all = await sql`select datname from pg_database where datname like 'tidings\_%'`;
    const chosen = all
      .map((row) => row.datname)
      .filter((name) => {
        const match = RUN_DATABASE.exec(name);
        return match !== null && which(match);
      });
    await Promise.all(chosen.map((name) => sql.unsafe(`drop database if exists "${name}" with (force)`)));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// What a run stopped before its end left behind (killed at its deadline, or by hand): dropped once a
// day old, so that another checkout's run on the same server keeps its own. No server: nothing to do.
const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
await dropRunDatabases((match) => Number(match[1]) < dayAgo).catch(() => {});

const built = await buildTests(found.map((f) => f.file));
// The browser files that show the dashboard share one build of it (test/dashboard-page.ts reads
// TEST_DASHBOARD_DIR), made here unless the caller made one.
let dashboardDir = process.env.TEST_DASHBOARD_DIR;
if (!dashboardDir && found.some((f) => f.showsDashboard)) {
  dashboardDir = path.join(built.dir, "dashboard");
  const vite = spawnSync(
    process.execPath,
    [
      path.join(import.meta.dirname, "../node_modules/vite/bin/vite.js"),
      "build",
      "dashboard",
      "--logLevel",
      "warn",
    ],
    {
      cwd: path.join(import.meta.dirname, ".."),
      env: { ...process.env, DASHBOARD_OUT_DIR: dashboardDir },
      stdio: "inherit",
    },
  );
  if (vite.status !== 0) {
    console.error("the dashboard's build failed");
    rmSync(built.dir, { recursive: true, force: true });
    process.exit(1);
  }
}
const bundleOf = new Map(found.map((f, i) => [f.file, built.files[i]]));
// node --test starts the files it is given in the order of their paths, not in the order given: each
// process gets an entry of its own whose name keeps the order above (`<position>-<name>.mjs`). Without
// them the shared groups ("shared-…") started first and the longest files, under "test/", last:
// one file then ran on alone for the run's last 20 s.
let position = 0;
const entryFile = (name) =>
  path.join(
    built.dir,
    `${String(++position).padStart(3, "0")}-${path.basename(name).replace(/\.[cm]?[jt]s$/, "")}.mjs`,
  );
// What every entry adds: once its process's tests are all done, and its report written out to the
// runner, the process exits, whatever handle a test left open. Unref'd: a process with nothing left
// open ends by itself first.
const EXIT_WHEN_DONE = [
  'import { after as afterAll } from "node:test";',
  "afterAll(() => {",
  "  const exitWhenWritten = () =>",
  "    process.stdout.writableLength === 0 && process.stderr.writableLength === 0",
  "      ? process.exit()",
  "      : setTimeout(exitWhenWritten, 20).unref();",
  "  setTimeout(exitWhenWritten, 500).unref();",
  "});",
].join("\n");
// An own file's entry only imports its bundle.
const ownEntry = (f) => {
  const entry = entryFile(f.file);
  writeFileSync(
    entry,
    `// ${f.file}\n${EXIT_WHEN_DONE}\nimport ${JSON.stringify(pathToFileURL(bundleOf.get(f.file)).href)};\n`,
  );
  return entry;
};
// Each group's entry imports its files one after another, each registering its tests as it loads,
// and only then lets them run, in that order, in this one process.
const groupEntry = (group, i) => {
  const entry = entryFile(`shared-${String(i + 1).padStart(2, "0")}`);
  const bundles = group.files.map((file) => bundleOf.get(file));
  writeFileSync(
    entry,
    [
      `// ${group.files.join(", ")}`,
      'import { before } from "node:test";',
      EXIT_WHEN_DONE,
      // No test starts before every file has registered its own: with tests already running while
      // later files were imported, one run silently left out a later file's tests (8 of 2,505).
      `const loaded = (async () => { for (const file of ${JSON.stringify(bundles)}) await import(file); })();`,
      "before(() => loaded);",
      "",
    ].join("\n"),
  );
  return entry;
};
// The groups are of about equal size; the largest of them start first all the same.
groups.sort((a, b) => b.size - a.size);
const entries = [...found.filter((f) => f.own).map(ownEntry), ...groups.map(groupEntry)];
// One Chromium for the whole run: the browser files connect to it (test/browser-page.ts reads
// TEST_BROWSER_WS), each page in a context of its own, rather than each file starting its own
// browser (on a two-core machine some 4 s of CPU a start, 15 starts a run). Without Chromium, or when
// the caller gives one, the files do as they would alone.
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
let browserServer;
if (!process.env.TEST_BROWSER_WS && found.some((f) => f.usesBrowser) && existsSync(chromiumPath)) {
  const { chromium } = await import("playwright-core");
  // The arguments test/browser-page.ts launches a browser of its own with.
  browserServer = await chromium.launchServer({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
}
const child = spawn(
  process.execPath,
  [
    "--enable-source-maps",
    // The test processes (node --test hands its V8 flags on to them) allocate fast and briefly: a
    // young generation of 32 MB a half, not V8's 16, promotes less of it to the old one. The
    // services they start keep the flags of `npm start`.
    "--max-semi-space-size=32",
    "--test",
    "--test-reporter=spec",
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${fileTimeoutS * 1000}`,
    ...flags,
    ...entries,
  ],
  // Its own process group, so that everything it started can be stopped together.
  {
    stdio: "inherit",
    env: {
      ...process.env,
      [TEST_BUILD_ENV]: built.dir,
      TIDINGS_TEST_RUN: runMark,
      ...(dashboardDir ? { TEST_DASHBOARD_DIR: dashboardDir } : {}),
      ...(browserServer ? { TEST_BROWSER_WS: browserServer.wsEndpoint() } : {}),
    },
    detached: true,
  },
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
child.on("exit", async (code, signal) => {
  clearTimeout(deadline);
  // Whatever a test file left running in the group goes with the run.
  killGroup("SIGKILL");
  await browserServer?.close().catch(() => {});
  rmSync(built.dir, { recursive: true, force: true });
  const exitCode = code ?? 128 + (os.constants.signals[signal] ?? 0);
  try {
    await dropRunDatabases((match) => match[0].includes(`_${runMark}_`));
  } catch (error) {
    // No server at the default address: the run had no PostgreSQL half (and said so), nothing to drop.
    const noServer = error?.code === "ECONNREFUSED" && !process.env.TEST_DATABASE_URL;
    // Otherwise not the tests' failure either: said, and the run's result stands.
    if (!noServer)
      console.error(`the run's PostgreSQL databases were not dropped: ${error?.message ?? error}`);
  }
  process.exit(exitCode);
});
