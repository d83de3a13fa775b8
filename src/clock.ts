/**
 * Business time. Everything that stamps a record or decides when something is due asks a Clock, so a
 * test can move time on (a delay, a digest window, a key's expiry) without waiting for it. Only the
 * system clock reads the wall clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `fn` once the clock reaches `at` (epoch milliseconds), or at once when it already has.
   * The returned function cancels the call. Timers do not keep the process alive. A promise `fn`
   * returns stands for the work the call set off: a ManualClock keeps it, so that a test can wait
   * for that work (see ManualClock.settled()); `fn` handles its own errors.
   */
  at(at: number, fn: () => unknown): () => void;
}

/** The current time of a clock, as the ISO 8601 UTC string every resource carries. */
export const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();

// setTimeout's limit (2^31-1 ms, about 24.8 days); a later moment is reached in steps.
const MAX_TIMEOUT_MS = 2_147_483_647;

export const systemClock: Clock = {
  now: () => Date.now(),
  at(at, fn) {
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      const wait = at - Date.now();
      if (wait <= 0) {
        timer = undefined;
        fn();
        return;
      }
      timer = setTimeout(arm, Math.min(wait, MAX_TIMEOUT_MS));
      timer.unref();
    };
    // Never synchronously: a caller may still be setting up what fn reads.
    timer = setTimeout(arm, 0);
    timer.unref();
    return () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
    };
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => unknown;
}

/**
 * A clock that moves only when told to: `advance(ms)` or `set(epochMs)` fire the timers that fall
 * due, in time order, each after the clock reads its moment. For tests and benchmarks.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers = new Set<PendingTimer>();
  /** The promises fired timers returned, until they settle; and how many there have been. */
  #working = new Set<Promise<unknown>>();
  #started = 0;

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.#now = typeof start === "number" ? start : start.getTime();
  }

  now(): number {
    return this.#now;
  }

  at(at: number, fn: () => unknown): () => void {
    const timer: PendingTimer = { at, seq: this.#seq++, fn };
    this.#timers.add(timer);
    if (at <= this.#now) queueMicrotask(() => this.#fire(timer));
    return () => {
      this.#timers.delete(timer);
    };
  }

  /** Moves the clock on by `ms` and fires every timer due by then. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a clock only moves forward (advance by ${ms})`);
    this.set(this.#now + ms);
  }

  /** Moves the clock to `epochMs` (never backward) and fires every timer due by then. */
  set(epochMs: number): void {
    if (epochMs < this.#now) throw new RangeError("a clock only moves forward");
    for (;;) {
      const next = [...this.#timers]
        .filter((t) => t.at <= epochMs)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.#now = Math.max(this.#now, next.at);
      this.#fire(next);
    }
    this.#now = epochMs;
  }

  /** How many timers are waiting. */
  get pending(): number {
    return this.#timers.size;
  }

  /** How many fired timers have returned a promise so far (see settled()). */
  get started(): number {
    return this.#started;
  }

  /**
   * Resolves once every promise a fired timer returned has settled, those of timers fired meanwhile
   * included, with `started` as it was at that moment: a caller that finds `started` moved on since
   * knows that more work began after.
   */
  async settled(): Promise<number> {
    while (this.#working.size > 0) await Promise.allSettled([...this.#working]);
    return this.#started;
  }

  #fire(timer: PendingTimer): void {
    if (!this.#timers.delete(timer)) return;
    const work = timer.fn();
    if (!(work instanceof Promise)) return;
    this.#started++;
    const done = () => {
      this.#working.delete(settled);
    };
    const settled: Promise<void> = work.then(done, done);
    this.#working.add(settled);
  }
}
