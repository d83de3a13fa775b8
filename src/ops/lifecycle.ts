import type { Config } from "../config.ts";
import { errorBody } from "../errors.ts";
import { pathOf, sendUnavailable } from "../http/error-handler.ts";
import type { App } from "../http/types.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** True from the start of shutdown: /health answers 503 and new requests are turned away. */
    readonly draining: boolean;
    /** Starts draining (main.ts calls it on SIGTERM, before closing the server). */
    startDraining(): void;
  }
}

/**
 * Draining and the request deadline.
 *
 * On shutdown the server stops accepting connections (Fastify's close), requests already running
 * finish, and a request that still arrives on an open connection gets a 503 with Retry-After and
 * `Connection: close`, in the one error body, so a client or load balancer knows to go elsewhere.
 *
 * No request outlives REQUEST_TIMEOUT_MS: past it the client gets a 503 with Retry-After (a hung
 * database must not hang its clients), and the log says which request it was; or a 408 when the
 * client itself has not finished sending its body by then.
 */
export function registerLifecycle(app: App, config: Config): void {
  let draining = false;
  app.decorate("draining", {
    getter: () => draining,
  });
  app.decorate("startDraining", () => {
    draining = true;
  });
  app.addHook("preClose", async () => {
    draining = true;
  });

  // Callback style, as every hook on every request here: an async hook costs a promise and a turn
  // of the microtask queue.
  app.addHook("onRequest", (request, reply, done) => {
    if (draining) {
      reply.header("connection", "close");
      sendUnavailable(request, reply, "The service is shutting down; try again shortly");
      return;
    }
    const timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      if (request.raw.complete === false) {
        // The client is still sending its body: its delay, not ours.
        reply.header("connection", "close");
        return reply
          .code(408)
          .send(errorBody(408, "The request body did not arrive in time", pathOf(request)));
      }
      sendUnavailable(request, reply, "The service did not answer in time; try again shortly", "error", {
        timeoutMs: config.requestTimeoutMs,
      });
    }, config.requestTimeoutMs);
    // The server's socket keeps the process alive while it serves; this timer must not on its own.
    timer.unref();
    // A response emits "close" once it has finished, or when its connection closes first.
    reply.raw.once("close", () => clearTimeout(timer));
    done();
  });
}
