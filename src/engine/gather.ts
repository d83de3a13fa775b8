/**
 * Work that arrives at the same time in one process, gathered into batches: what joins within one
 * turn of the event loop (and while the batches in flight run) goes into the next batch, which one
 * transaction runs. A batch of one is handed back to run on its own path: there each statement is
 * prepared once and sent in fewer round trips, where a batch's are built for its size. Used by the
 * due delays (due-delays.ts) and the triggers' acknowledgements (trigger-batch.ts).
 */
export interface GatherOptions<Item, Outcome> {
  /** The most items a batch takes. */
  max: number;
  /** Batches in flight at once: while one commits, the next gathers. */
  inFlight: number;
  /** Runs a batch: each item's outcome, in the batch's order. */
  run: (batch: Item[]) => Promise<Outcome[]>;
  /**
   * The outcome of an item that came alone, or whose batch failed (nothing of it was committed):
   * it runs on its own path, as it would have.
   */
  onItsOwn: Outcome;
}

export class Gatherer<Item, Outcome> {
  readonly #options: GatherOptions<Item, Outcome>;
  #waiting: { item: Item; settle: (outcome: Outcome) => void }[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(options: GatherOptions<Item, Outcome>) {
    this.#options = options;
  }

  /** The item's outcome, once its batch has run (or it is left to its own path). */
  add(item: Item): Promise<Outcome> {
    return new Promise((settle) => {
      this.#waiting.push({ item, settle });
      this.#schedule();
    });
  }

  #schedule(): void {
    const options = this.#options;
    if (this.#scheduled || this.#inFlight >= options.inFlight || this.#waiting.length === 0) return;
    this.#scheduled = true;
    // After this turn of the event loop, so that the work whose reads answered together joins one batch.
    setImmediate(() => {
      this.#scheduled = false;
      const batch = this.#waiting.splice(0, options.max);
      if (batch.length === 0) return;
      const onItsOwn = () => {
        for (const { settle } of batch) settle(options.onItsOwn);
      };
      if (batch.length === 1) {
        onItsOwn();
        this.#schedule();
        return;
      }
      this.#inFlight++;
      options
        .run(batch.map(({ item }) => item))
        .then((outcomes) => {
          // One outcome an item, in order (the batch's own runs map the batch).
          batch.forEach(({ settle }, i) => {
            settle(outcomes[i] as Outcome);
          });
        }, onItsOwn)
        .finally(() => {
          this.#inFlight--;
          this.#schedule();
        });
    });
  }
}
