// Builds dist/ (the server with tsc, the dashboard with Vite) and records what it was built from.
//
//   node scripts/build.mjs              build, always (npm run build)
//   node scripts/build.mjs --if-stale   build only when the sources changed since the last build
//                                       (npm start and npm run cli: a build takes seconds, the check
//                                       a few milliseconds)
//
// What the build reads is fingerprinted: the path, size and mtime of every file and folder under
// src/ (tests aside) and dashboard/, and of the tsconfig and package files. Folders count because a
// file deleted or renamed changes its folder's mtime; comparing fingerprints rather than times
// catches a file put back with an older mtime too. The fingerprint is taken before the build starts
// and written to dist/.build-stamp after it succeeds, so an edit made during a build makes the next
// check build again, and a failed build leaves dist stale.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const STAMP = path.join(ROOT, "dist", ".build-stamp");
const TREES = ["src", "dashboard"];
const FILES = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json"];
/** What must exist for dist to be usable, whatever the stamp says (someone may have deleted part of it). */
const OUTPUTS = ["dist/main.js", "dist/cli.js", "dist/dashboard/index.html"];

function fingerprint() {
  const entries = [];
  const add = (relative) => {
    const stat = fs.statSync(path.join(ROOT, relative), { throwIfNoEntry: false });
    // A missing file is part of the fingerprint too: its later appearance changes it.
    entries.push(
      stat ? `${relative}\t${stat.isDirectory() ? "d" : stat.size}\t${stat.mtimeMs}` : `${relative}\t-`,
    );
    return stat;
  };
  const walk = (relative) => {
    const stat = add(relative);
    if (!stat?.isDirectory()) return;
    for (const name of fs.readdirSync(path.join(ROOT, relative)).sort()) {
      if (name === "node_modules" || name.endsWith(".test.ts")) continue;
      walk(path.join(relative, name));
    }
  };
  for (const tree of TREES) walk(tree);
  for (const file of FILES) add(file);
  return createHash("sha256").update(entries.join("\n")).digest("hex");
}

function isCurrent(print) {
  if (OUTPUTS.some((output) => !fs.existsSync(path.join(ROOT, output)))) return false;
  let stamp;
  try {
    stamp = fs.readFileSync(STAMP, "utf8").trim();
  } catch {
    return false;
  }
  return stamp === print;
}

/** Runs an npm script; resolves with its exit code. */
function npmRun(script) {
  return new Promise((resolve) => {
    const npm = process.env.npm_execpath;
    // Inside an npm script npm_execpath names npm's own entry point; run it with this node.
    const [command, args] = npm?.endsWith(".js")
      ? [process.execPath, [npm, "run", "-s", script]]
      : ["npm", ["run", "-s", script]];
    const child = spawn(command, args, { cwd: ROOT, stdio: "inherit" });
    child.on("error", () => resolve(1));
    child.on("close", (code) => resolve(code ?? 1));
  });
}

const ifStale = process.argv.includes("--if-stale");
const print = fingerprint();
if (ifStale && isCurrent(print)) process.exit(0);
if (ifStale) process.stderr.write("tidings: building dist/ (missing, or out of date with the sources)\n");
fs.rmSync(STAMP, { force: true });
// The two builds read and write different files: side by side they take the time of the longer.
const codes = await Promise.all([npmRun("build:server"), npmRun("build:dashboard")]);
const failed = codes.find((code) => code !== 0);
if (failed !== undefined) process.exit(failed);
fs.writeFileSync(STAMP, `${print}\n`);
