import { Type } from "typebox";
import type { Config } from "../config.ts";
import { ErrorBody } from "../errors.ts";
import { sendUnavailable } from "../http/error-handler.ts";
import type { App } from "../http/types.ts";
import type { Store } from "../store/store.ts";

/** Resolves when `promise` does within `ms`, else rejects: a ping must not hang the caller. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`${what} timed out after ${ms} ms`), { code: "ETIMEDOUT" })),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** How long /health waits for the database before calling it unreachable. */
export const pingTimeoutMs = (config: Config) => Math.min(2000, config.requestTimeoutMs);

/** `GET /health` (contract part 9): 200 when the database answers; 503 while draining or when it does not. */
export function registerHealth(app: App, store: Store, config: Config): void {
  app.get(
    "/health",
    {
      schema: {
        tags: ["Operations"],
        summary: "Whether the service and its database answer",
        description:
          "200 when the database answers. 503 with Retry-After while the process is shutting down or " +
          "the database does not answer within two seconds; load balancers should stop sending traffic.",
        response: { 200: Type.Object({ status: Type.Literal("ok") }), 503: ErrorBody },
      },
    },
    async (request, reply) => {
      if (app.draining) return sendUnavailable(request, reply, "The service is shutting down");
      try {
        await withTimeout(store.ping(), pingTimeoutMs(config), "database ping");
      } catch (error) {
        return sendUnavailable(request, reply, "The database is unreachable", "warn", { err: error });
      }
      return { status: "ok" as const };
    },
  );
}
