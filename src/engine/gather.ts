/**
 * Work that arrives at the same time in one process, gathered into batches: what joins within one
 * turn of the event loop (and while the batches in flight run) goes into the next batch, which one
 * transaction runs. A batch of one is handed back to run on its own path: there each statement is
 * prepared once and sent in fewer round trips, where a batch's are built for its size. Used by the
 * due delays (due-delays.ts) and the triggers' acknowledgements (trigger-batch.ts).
 */
export interface GatherOptions<Item> {
  /** The most items a batch takes. */
  max: number;
  /** Batches in flight at once: while one commits, the next gathers. */
  inFlight: number;
  /** An item that came alone: it runs on its own path. */
  alone: (item: Item) => void;
  /** Runs a batch and settles its items; a rejection hands them to `failed`. */
  run: (batch: Item[]) => Promise<void>;
  /** Nothing of the batch was committed: each item runs on its own path, as it would have. */
  failed: (batch: Item[], error: unknown) => void;
}

export class Gatherer<Item> {
  readonly #options: GatherOptions<Item>;
  #waiting: Item[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(options: GatherOptions<Item>) {
    this.#options = options;
  }

  add(item: Item): void {
    this.#waiting.push(item);
    this.#schedule();
  }

  #schedule(): void {
    const options = this.#options;
    if (this.#scheduled || this.#inFlight >= options.inFlight || this.#waiting.length === 0) return;
    this.#scheduled = true;
    // After this turn of the event loop, so that the work whose reads answered together joins one batch.
    setImmediate(() => {
      this.#scheduled = false;
      const batch = this.#waiting.splice(0, options.max);
      const [first] = batch;
      if (first === undefined) return;
      if (batch.length === 1) {
        options.alone(first);
        this.#schedule();
        return;
      }
      this.#inFlight++;
      options
        .run(batch)
        .catch((error: unknown) => options.failed(batch, error))
        .finally(() => {
          this.#inFlight--;
          this.#schedule();
        });
    });
  }
}
