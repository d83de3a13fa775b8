import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { App } from "../http/types.ts";
import { type BucketStore, LocalBuckets, RedisBuckets, type Take } from "./token-bucket.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Whether limitRate has counted this request (it counts each once). */
    rateLimitCounted: boolean;
  }
  interface FastifyInstance {
    /**
     * Counts the request against its bucket (the key's environment once authenticated, else the
     * client's address), sets the RateLimit-* headers, and throws a 429 when the bucket is empty:
     * synchronously when the buckets are this process's, else through the promise it returns.
     */
    limitRate(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
  }
}

/** The bucket a request draws from: its environment when a key proved one, else its address. */
export function rateKey(request: FastifyRequest): string {
  const tenant = request.tenant as FastifyRequest["tenant"] | undefined;
  return tenant ? `env:${tenant.environmentId}` : `ip:${request.ip}`;
}

async function bucketStore(app: App, config: Config): Promise<BucketStore> {
  const options = { rate: config.rateLimitRps, burst: Math.max(1, config.rateLimitBurst) };
  if (!config.redisUrl) return new LocalBuckets(options);
  // Loaded only when used: the Redis client is a fifth of the process's memory at start-up.
  const { Redis } = await import("ioredis");
  const redis = new Redis(config.redisUrl, {
    // Fail fast instead of queueing while Redis is away: the local buckets take over meanwhile.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 250, 2000),
    lazyConnect: false,
  });
  return new RedisBuckets(redis, options, app.log);
}

/**
 * Rate limit per environment (contract part 9): a token bucket of RATE_LIMIT_BURST tokens refilled at
 * RATE_LIMIT_RPS per second, in this process or shared through Redis (REDIS_URL). The hooks in app.ts
 * decide when a request is counted, because the environment is known only after the API key is
 * checked. Every counted request carries RateLimit-Limit, -Remaining and -Reset; one refused gets a
 * 429 with Retry-After.
 *
 * The buckets are asked directly. @fastify/rate-limit used to stand between them and the hooks, but
 * with our own store, key and headers it added only its promises (five a request); and a bucket
 * kept in this process now answers without one, synchronously.
 */
export async function registerRateLimit(app: App, config: Config): Promise<void> {
  if (config.rateLimitRps === 0) {
    app.decorate("limitRate", () => {});
    return;
  }
  const buckets = await bucketStore(app, config);
  const burst = Math.max(1, config.rateLimitBurst);
  // Declared up front, so that marking a request keeps its shape (and the code that reads it fast).
  app.decorateRequest("rateLimitCounted", false);
  const apply = (reply: FastifyReply, key: string, take: Take) => {
    const seconds = Math.ceil(take.waitMs / 1000);
    reply.header("ratelimit-limit", burst);
    reply.header("ratelimit-remaining", take.allowed ? take.remaining : 0);
    reply.header("ratelimit-reset", seconds);
    if (take.allowed) return;
    const retry = Math.max(1, seconds);
    app.rateLimited?.(key);
    throw new ApiError(
      429,
      `Too many requests; retry in ${retry} second${retry === 1 ? "" : "s"}`,
      undefined,
      {
        "retry-after": String(retry),
        "ratelimit-reset": String(retry),
      },
    );
  };
  app.decorate("limitRate", (request: FastifyRequest, reply: FastifyReply) => {
    if (request.rateLimitCounted) return;
    request.rateLimitCounted = true;
    const key = rateKey(request);
    if (buckets instanceof LocalBuckets) return apply(reply, key, buckets.takeNow(key));
    return buckets.take(key).then(
      (take) => apply(reply, key, take),
      // A store that fails lets the request through (Redis falls back to local buckets first).
      () => apply(reply, key, { allowed: true, remaining: burst, waitMs: 0 }),
    );
  });
  app.addHook("onClose", async () => buckets.close());
}
