// Bundles test files, and the service's entry points that tests start as processes, into plain
// JavaScript that Node runs without a loader. Through tsx every process pays its loader hooks on each
// import (measured here: about 1.2 s more than the same code bundled, for one import of src/app.ts),
// and the suite starts a process per test file plus the servers and CLIs its tests run.
//
// The bundles hold our own code and the service's packages, in chunks the bundles share (a process
// that loads several test files loads each chunk once). Loading the packages through node's resolver
// file by file cost a process about a second of CPU more than loading them from a few chunks
// (measured on a service start: ~3.0 s of CPU to its first answer unbundled, ~1.8 s bundled). Some
// packages stay external and load from node_modules as usual (`EXTERNAL`): those that find their own
// files beside them at run time, the native one, and every development package (test clients,
// browsers, build tools), which the service does not ship. Our modules read `import.meta.url`, `dirname` and `filename` to find files beside them (the dashboard's
// build, package.json): in a bundle those would name the bundle, so each source file gets its own
// values written in as literals, and the bundle behaves as the file it came from.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The variable that tells a test where the entry points' bundles are (test/processes.ts reads it). */
export const TEST_BUILD_ENV = "TIDINGS_TEST_BUILD";

/**
 * The scripts tests start as processes: bundled too, at the same relative path with `.mjs`
 * (test/processes.ts runs those bundles when the variable names a build).
 */
const ENTRY_POINTS = ["src/main.ts", "src/cli.ts"];

/**
 * Packages loaded from node_modules rather than bundled: the native driver, those that read files
 * beside their own code at run time (static files, their package.json, worker scripts), and those
 * named below.
 */
const EXTERNAL = new Set([
  "better-sqlite3",
  "@fastify/static",
  "@fastify/swagger",
  "@fastify/swagger-ui",
  "pino",
  "thread-stream",
  "cosmiconfig",
  "import-fresh",
  "ioredis",
  "socket.io",
  // Imported dynamically for their named exports, which a bundled CommonJS module does not give.
  "@socket.io/postgres-adapter",
  "@socket.io/redis-adapter",
]);

const packageJson = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8"));
const DEVELOPMENT = new Set(Object.keys(packageJson.devDependencies ?? {}));

/** The name of the package a bare import names (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const servicePackages = {
  name: "service-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      const name = packageName(args.path);
      if (EXTERNAL.has(name) || DEVELOPMENT.has(name)) return { path: args.path, external: true };
      return undefined;
    });
  },
};

const ownSource = {
  name: "own-import-meta",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = await readFile(args.path, "utf8");
      const contents = text
        .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(args.path)))
        .replaceAll("import.meta.filename", JSON.stringify(args.path));
      return { contents, loader: "ts" };
    });
  },
};

/**
 * Bundles `files` (paths relative to the repository or absolute) into a new directory under
 * .test-build/ (inside the repository, so that packages resolve from its node_modules).
 * Returns the bundles in the order given and the directory, which the caller removes.
 */
export async function buildTests(files) {
  const dir = path.join(ROOT, ".test-build", `run-${process.pid}-${randomBytes(3).toString("hex")}`);
  const entries = [
    ...new Set([...files.map((f) => path.resolve(f)), ...ENTRY_POINTS.map((f) => path.join(ROOT, f))]),
  ];
  await build({
    entryPoints: entries,
    outdir: dir,
    outbase: ROOT,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: "linked",
    // Bundled CommonJS-style helpers (createRequire aside) have no `require` in an ES module.
    banner: {
      js: 'import { createRequire as __tidingsRequire } from "node:module"; const require = __tidingsRequire(import.meta.url);',
    },
    plugins: [servicePackages, ownSource],
    logLevel: "warning",
  });
  const bundleOf = (file) =>
    path.join(dir, path.relative(ROOT, path.resolve(file))).replace(/\.[cm]?ts$/, ".mjs");
  return { dir, files: files.map(bundleOf) };
}
