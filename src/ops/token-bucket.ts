import type { FastifyBaseLogger } from "fastify";
import type { Redis } from "ioredis";

/** What a bucket says about one request. */
export interface Take {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Allowed: ms until the bucket is full again. Refused: ms until the next token. */
  waitMs: number;
}

export interface BucketStore {
  take(key: string): Promise<Take>;
  close(): Promise<void>;
}

export interface BucketOptions {
  /** Tokens added per second. */
  rate: number;
  /** Bucket size: the largest burst. */
  burst: number;
}

function settle(tokens: number, { rate, burst }: BucketOptions): Take {
  if (tokens >= 1) {
    const left = tokens - 1;
    return { allowed: true, remaining: Math.floor(left), waitMs: Math.ceil(((burst - left) * 1000) / rate) };
  }
  return { allowed: false, remaining: 0, waitMs: Math.max(1, Math.ceil(((1 - tokens) * 1000) / rate)) };
}

/** One process's buckets, in memory. Full buckets are forgotten, so idle clients cost nothing. */
export class LocalBuckets implements BucketStore {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly options: BucketOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async take(key: string): Promise<Take> {
    return this.takeNow(key);
  }

  takeNow(key: string): Take {
    const { rate, burst } = this.options;
    const now = this.now();
    const bucket = this.buckets.get(key);
    const tokens = bucket ? Math.min(burst, bucket.tokens + ((now - bucket.at) * rate) / 1000) : burst;
    const result = settle(tokens, this.options);
    const after = result.allowed ? tokens - 1 : tokens;
    if (bucket) {
      bucket.tokens = after;
      bucket.at = now;
    } else {
      this.buckets.set(key, { tokens: after, at: now });
      if (this.buckets.size > 10_000) this.sweep(now);
    }
    return result;
  }

  private sweep(now: number) {
    const { rate, burst } = this.options;
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) * rate) / 1000 >= burst) this.buckets.delete(key);
    }
  }

  async close() {
    this.buckets.clear();
  }
}

// One atomic step on the Redis server, with the server's clock, so every process shares one bucket.
// Returns { allowed (0/1), tokens left * 1000 (integer; Lua numbers are truncated on return) }.
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - tokens) * 1000 / rate)))
return { allowed, math.floor(tokens * 1000) }
`;

type RedisWithTake = Redis & {
  tidingsTake(key: string, rate: number, burst: number): Promise<[number, number]>;
};

/**
 * Buckets shared by every process through Redis. When Redis does not answer, each process falls back
 * to its own buckets (limits per process instead of shared), says so once in the log, and says so
 * again when Redis is back: the service keeps serving either way.
 */
export class RedisBuckets implements BucketStore {
  private readonly redis: RedisWithTake;
  private readonly fallback: LocalBuckets;
  private down = false;

  constructor(
    redis: Redis,
    private readonly options: BucketOptions,
    private readonly log: FastifyBaseLogger,
    private readonly prefix = "tidings:rate:",
  ) {
    this.fallback = new LocalBuckets(options);
    redis.defineCommand("tidingsTake", { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis = redis as RedisWithTake;
    redis.on("error", (error: Error & { code?: string }) => this.markDown(error));
    redis.on("ready", () => this.markUp());
  }

  private markUp() {
    if (!this.down) return;
    this.down = false;
    this.log.warn("rate limit: Redis answers again; limits are shared across processes again");
  }

  private markDown(error: Error & { code?: string }) {
    if (this.down) return;
    this.down = true;
    this.log.warn(
      { code: error.code, reason: error.message },
      "rate limit: Redis is unreachable; serving on, with limits kept by each process until it answers",
    );
  }

  async take(key: string): Promise<Take> {
    const status = this.redis.status;
    if (status !== "ready") {
      // Still making its first connection: quietly per process. Lost or closed: say so once.
      if (status !== "wait" && status !== "connecting" && status !== "connect") {
        this.markDown(Object.assign(new Error(`the Redis connection is ${status}`), { code: status }));
      }
      return this.fallback.take(key);
    }
    try {
      const [allowed, milliTokens] = await this.redis.tidingsTake(
        this.prefix + key,
        this.options.rate,
        this.options.burst,
      );
      // A command that timed out marks Redis down without the connection dropping: the next answer
      // is what says it is back.
      this.markUp();
      const tokens = milliTokens / 1000;
      if (allowed === 1) return settle(tokens + 1, this.options);
      return settle(tokens, this.options);
    } catch (error) {
      this.markDown(error as Error);
      return this.fallback.take(key);
    }
  }

  async close() {
    this.redis.disconnect();
    await this.fallback.close();
  }
}
