import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { Config } from "../config.ts";
import { errorBody } from "../errors.ts";
import type { App } from "../http/types.ts";
import { helmetHeaders } from "./security.ts";

/**
 * Where `npm run build` puts the dashboard (dashboard/ built by Vite): dist/dashboard, whether the
 * service runs from dist/ (npm start) or from src/ through tsx (tests, npm run dev).
 */
export const DEFAULT_DASHBOARD_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../dist/dashboard",
);

/**
 * The dashboard's headers: the API's (src/ops/security.ts) but for a policy that lets the page load
 * its own scripts, styles and images and call its own origin, and nothing else (no inline script,
 * no eval, no other origin).
 */
export function dashboardHeaders(config: Config): Record<string, string> {
  return helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "manifest-src": ["'self'"],
        "base-uri": ["'none'"],
        "form-action": ["'none'"],
        "frame-ancestors": ["'none'"],
      },
    },
    crossOriginResourcePolicy: { policy: config.corsOrigins.length > 0 ? "cross-origin" : "same-origin" },
  });
}

/**
 * Serves the built dashboard under /dashboard. The page talks to the API on the same origin with
 * the key its user typed; nothing here needs a key (the files are the same for everyone). When the
 * build is missing, /dashboard says how to make it instead of a bare 404.
 */
export async function registerDashboard(
  app: App,
  config: Config,
  root = DEFAULT_DASHBOARD_DIR,
): Promise<void> {
  const headers = dashboardHeaders(config);
  await app.register(async (scope) => {
    scope.addHook("onRequest", (_request, reply, done) => {
      reply.headers(headers);
      done();
    });
    if (!existsSync(path.join(root, "index.html"))) {
      scope.get("/dashboard", { schema: { hide: true } }, async (request, reply) =>
        reply
          .code(404)
          .send(
            errorBody(
              404,
              "The dashboard is not built: run `npm run build`",
              request.url.split("?")[0] ?? "",
            ),
          ),
      );
      return;
    }
    await scope.register(fastifyStatic, {
      root,
      prefix: "/dashboard/",
      index: "index.html",
      // One route per file of the build, made at start-up (the build does not change under a
      // running process); /dashboard and /dashboard/ are index.html.
      wildcard: false,
      // Vite names every asset by its content: it can be kept forever. The page itself never is.
      setHeaders(reply, file) {
        reply.header(
          "cache-control",
          file.includes(`${path.sep}assets${path.sep}`) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    });
  });
}
