import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import {
  exceededReason,
  type FieldTemplate,
  type RenderExceeded,
  type RenderLimits,
  type RenderResult,
} from "./render.ts";
import type { RenderRequest, RenderResponse } from "./render-worker.ts";

/**
 * What rendering a step's fields on a thread answered: each field's result (up to the first that ran
 * into a limit), or the whole render's when its thread had to be ended.
 */
export type PoolAnswer = { results: RenderResult[] } | { exceeded: RenderExceeded };

/** Renders a step's fields off the event loop. */
export interface RenderPool {
  render(fields: FieldTemplate[], data: Record<string, unknown>, limits: RenderLimits): Promise<PoolAnswer>;
  close(): Promise<void>;
}

export interface RenderPoolOptions {
  /** How many render threads at most (default: the cores but one, between 1 and 4). */
  threads?: number;
  /**
   * How long past its time limit a render may still run before its thread is ended (default: as
   * long again as the limit, at least 500 ms). The budget inside the thread stops a render at its
   * limit; this catches the one step it cannot interrupt (a helper working through a huge value),
   * and leaves room for compiling the templates and for a busy host, since a thread ended costs a
   * new one's start.
   */
  graceMs?: (limits: RenderLimits) => number;
  /** The heap a thread may use, in MiB (default 256): past it the thread dies, not the process. */
  maxHeapMb?: number;
  /** Starts a thread; default: render-worker.ts. Tests start a stand-in that never answers. */
  spawn?: (options: { maxHeapMb: number }) => Worker;
}

interface Task {
  request: Omit<RenderRequest, "id">;
  resolve(answer: PoolAnswer): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  task?: { id: number; task: Task; timer: NodeJS.Timeout };
}

const defaultThreads = () => Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * The render thread's module. In a built install it sits beside this file as JavaScript; from the
 * sources (development, tests) it is TypeScript, loaded through tsx as the process itself is.
 */
function spawnRenderThread(options: { maxHeapMb: number }): Worker {
  const here = import.meta.url;
  const resourceLimits = { maxOldGenerationSizeMb: options.maxHeapMb };
  if (!here.endsWith(".ts")) return new Worker(new URL("./render-worker.js", here), { resourceLimits });
  const entry = new URL("./render-worker.ts", here).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

/**
 * Render threads (node:worker_threads), started when first needed, each rendering one step at a
 * time; a step waits for a free thread. A render that outruns its time plus grace has its thread
 * ended (`terminate` stops even a loop that never yields) and a new one started in its place, and
 * answers as over its time; a thread that dies of its heap limit answers as over memory. Idle
 * threads do not keep the process alive.
 */
export class WorkerRenderPool implements RenderPool {
  readonly #threads: Thread[] = [];
  readonly #queue: Task[] = [];
  readonly #max: number;
  readonly #grace: (limits: RenderLimits) => number;
  readonly #maxHeapMb: number;
  readonly #spawn: (options: { maxHeapMb: number }) => Worker;
  #next = 1;
  #closed = false;

  constructor(options: RenderPoolOptions = {}) {
    this.#max = Math.max(1, options.threads ?? defaultThreads());
    this.#grace = options.graceMs ?? ((limits) => Math.max(500, limits.timeoutMs));
    this.#maxHeapMb = options.maxHeapMb ?? 256;
    this.#spawn = options.spawn ?? spawnRenderThread;
  }

  /** Threads started and alive (for tests: a runaway render's thread is replaced). */
  get threads(): number {
    return this.#threads.length;
  }

  render(fields: FieldTemplate[], data: Record<string, unknown>, limits: RenderLimits): Promise<PoolAnswer> {
    if (this.#closed) return Promise.reject(new Error("the render threads are closed"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ request: { fields, data, limits }, resolve, reject });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#threads.splice(0);
    for (const task of this.#queue.splice(0)) task.reject(new Error("the render threads are closed"));
    await Promise.all(
      threads.map(async (thread) => {
        if (thread.task) {
          clearTimeout(thread.task.timer);
          thread.task.task.reject(new Error("the render threads are closed"));
        }
        await thread.worker.terminate();
      }),
    );
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const idle = this.#threads.find((thread) => thread.ready && !thread.task);
      if (!idle) {
        if (this.#threads.length < this.#max && !this.#threads.some((thread) => !thread.ready)) this.#start();
        return;
      }
      const task = this.#queue.shift() as Task;
      this.#run(idle, task);
    }
  }

  #run(thread: Thread, task: Task): void {
    const id = this.#next++;
    const { limits } = task.request;
    const timer = setTimeout(() => {
      // The render outran its budget and its grace: end the thread, whatever it is doing.
      this.#retire(thread);
      task.resolve({ exceeded: exceededReason.time(limits.timeoutMs) });
    }, limits.timeoutMs + this.#grace(limits));
    thread.task = { id, task, timer };
    thread.worker.ref();
    try {
      thread.worker.postMessage({ id, ...task.request } satisfies RenderRequest);
    } catch (error) {
      // Data that cannot be copied to a thread (it never is JSON's): the step's own failure.
      clearTimeout(timer);
      thread.task = undefined;
      thread.worker.unref();
      task.reject(error);
      this.#dispatch();
    }
  }

  #start(): void {
    let worker: Worker;
    try {
      worker = this.#spawn({ maxHeapMb: this.#maxHeapMb });
    } catch (error) {
      for (const task of this.#queue.splice(0)) task.reject(error);
      return;
    }
    const thread: Thread = { worker, ready: false };
    this.#threads.push(thread);
    worker.unref();
    worker.on("message", (message: RenderResponse | "ready") => {
      if (message === "ready") {
        thread.ready = true;
        this.#dispatch();
        return;
      }
      const running = thread.task;
      if (!running || running.id !== message.id) return;
      clearTimeout(running.timer);
      thread.task = undefined;
      worker.unref();
      running.task.resolve({ results: message.results });
      this.#dispatch();
    });
    worker.on("error", (error: Error & { code?: string }) => {
      const running = thread.task;
      this.#retire(thread);
      if (running) {
        clearTimeout(running.timer);
        if (error.code === "ERR_WORKER_OUT_OF_MEMORY") {
          running.task.resolve({ exceeded: exceededReason.memory() });
        } else running.task.reject(error);
      } else if (!thread.ready) {
        // The thread could not even start: what waits would wait forever.
        for (const task of this.#queue.splice(0)) task.reject(error);
      }
    });
    worker.on("exit", () => {
      const running = thread.task;
      this.#retire(thread);
      if (running) {
        clearTimeout(running.timer);
        running.task.reject(new Error("a render thread stopped"));
      }
    });
  }

  /** Ends a thread and forgets it; the next dispatch starts another when work waits. */
  #retire(thread: Thread): void {
    const at = this.#threads.indexOf(thread);
    if (at === -1) return;
    this.#threads.splice(at, 1);
    thread.task = undefined;
    thread.worker.removeAllListeners("message");
    void thread.worker.terminate();
    if (!this.#closed) queueMicrotask(() => this.#dispatch());
  }
}

let shared: WorkerRenderPool | undefined;

/** The process's render threads, shared by every app and worker in it (the limits travel with each render). */
export function sharedRenderPool(): WorkerRenderPool {
  shared ??= new WorkerRenderPool();
  return shared;
}
