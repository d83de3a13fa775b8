import { inspect } from "node:util";

/**
 * How long poll() waits by default: a safety net for a test that would otherwise hang, not a timing
 * assertion, so it is generous (a loaded machine runs everything slowly). A test that asserts how
 * soon something happens measures it and says so, rather than leaning on this limit.
 */
export const POLL_LIMIT_MS = 30_000;

export interface PollOptions {
  /** What is awaited, for the failure: "the message in the feed". */
  what: string;
  /** When to give up; default POLL_LIMIT_MS. */
  limitMs?: number;
  /** Pause between reads; default 10 ms. */
  everyMs?: number;
  /**
   * Asked after every read that did not satisfy: a reason to fail at once (the process being waited
   * on exited, say), or undefined to go on.
   */
  stop?: () => string | undefined;
}

/**
 * Reads until `until` holds for what was read, and returns that value. Fails with `what` and the last
 * value read when `stop` gives a reason or the limit passes. Errors `read` throws are not caught.
 */
export async function poll<T>(
  read: () => T | Promise<T>,
  until: (value: T) => boolean,
  { what, limitMs = POLL_LIMIT_MS, everyMs = 10, stop }: PollOptions,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (until(value)) return value;
    const reason = stop?.();
    if (reason !== undefined) {
      throw new Error(`stopped waiting for ${what}: ${reason}\nlast value: ${shown(value)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`gave up waiting for ${what} after ${limitMs} ms\nlast value: ${shown(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function shown(value: unknown): string {
  const text = inspect(value, { depth: 4, breakLength: 120, maxArrayLength: 20, maxStringLength: 2_000 });
  return text.length > 4_000 ? `${text.slice(0, 4_000)}…` : text;
}
