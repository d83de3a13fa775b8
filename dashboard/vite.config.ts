import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The dashboard is served by the API process at /dashboard (src/ops/dashboard.ts) from dist/dashboard.
// DASHBOARD_OUT_DIR builds it elsewhere (the browser test builds into a directory of its own).
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/dashboard/",
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: process.env.DASHBOARD_OUT_DIR ?? fileURLToPath(new URL("../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // The polyfill is inline code, which the page's Content-Security-Policy refuses; every browser
    // this targets has modulepreload.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
