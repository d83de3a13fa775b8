import rateLimit from "@fastify/rate-limit";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { App } from "../http/types.ts";
import { type BucketStore, LocalBuckets, RedisBuckets } from "./token-bucket.ts";

declare module "fastify" {
  interface FastifyInstance {
    /**
     * Counts the request against its bucket (the key's environment once authenticated, else the
     * client's address), sets the RateLimit-* headers, and throws a 429 when the bucket is empty.
     */
    limitRate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
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
 * RATE_LIMIT_RPS per second, in this process or shared through Redis (REDIS_URL). @fastify/rate-limit
 * does the bookkeeping around our bucket store; the hooks in app.ts decide when a request is counted,
 * because the environment is known only after the API key is checked.
 */
export async function registerRateLimit(app: App, config: Config): Promise<void> {
  if (config.rateLimitRps === 0) {
    app.decorate("limitRate", async () => {});
    return;
  }
  const buckets = await bucketStore(app, config);
  const burst = Math.max(1, config.rateLimitBurst);
  // The plugin's store contract: `current` requests used of `max`, `ttl` ms until it resets.
  const store = {
    incr(key: string, done: (error: Error | null, result?: { current: number; ttl: number }) => void) {
      buckets.take(key).then(
        (take) =>
          done(null, { current: take.allowed ? burst - take.remaining : burst + 1, ttl: take.waitMs }),
        (error: Error) => done(error),
      );
    },
    child() {
      return store;
    },
  };
  await app.register(rateLimit, {
    global: false,
    max: burst,
    timeWindow: 1000,
    // A failing store lets the request through; ours falls back to local buckets before that.
    skipOnError: true,
    keyGenerator: rateKey,
    store: function StoreCtor() {
      return store;
    } as unknown as NonNullable<Parameters<typeof rateLimit>[1]>["store"],
  });
  const limiter = app.createRateLimit();
  const counted = Symbol("rate limit counted");
  app.decorate("limitRate", async (request: FastifyRequest, reply: FastifyReply) => {
    const flags = request as unknown as Record<symbol, boolean>;
    if (flags[counted]) return;
    flags[counted] = true;
    const result = await limiter(request);
    if (result.isAllowed) return;
    reply.header("ratelimit-limit", result.max);
    reply.header("ratelimit-remaining", result.remaining);
    reply.header("ratelimit-reset", result.ttlInSeconds);
    if (result.isExceeded) {
      const seconds = Math.max(1, result.ttlInSeconds);
      app.rateLimited?.(result.key);
      throw new ApiError(
        429,
        `Too many requests; retry in ${seconds} second${seconds === 1 ? "" : "s"}`,
        undefined,
        {
          "retry-after": String(seconds),
          "ratelimit-reset": String(seconds),
        },
      );
    }
  });
  app.addHook("onClose", async () => buckets.close());
}
