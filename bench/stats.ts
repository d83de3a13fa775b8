/** Latencies in milliseconds, kept up to a fixed count (the rest are counted but not kept). */
export class Latencies {
  readonly #values: Float64Array;
  #kept = 0;
  count = 0;

  constructor(capacity = 4_000_000) {
    this.#values = new Float64Array(capacity);
  }

  record(ms: number): void {
    this.count++;
    if (this.#kept < this.#values.length) this.#values[this.#kept++] = ms;
  }

  summary(): { p50: number; p99: number; max: number } {
    const sorted = this.#values.slice(0, this.#kept).sort();
    const at = (q: number) =>
      sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
    return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1) ?? 0) };
  }
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** What one measured window produced: the shape every load and ceiling run reports. */
export interface Measurement {
  /** Successful operations (2xx for HTTP) per second over the measured window. */
  rps: number;
  p50: number;
  p99: number;
  max: number;
  ok: number;
  /** Non-2xx responses and transport errors: a valid run has none. */
  failed: number;
  seconds: number;
}
