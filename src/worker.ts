import type { BridgeOptions } from "./bridge-client.ts";
import type { Deps } from "./deps.ts";
import type { JobQueue, StartOptions, TaskHandler } from "./engine/queue/index.ts";
import {
  type ChannelSenders,
  engineTasks,
  type MessageListener,
  Renderer,
  type RenderLimits,
} from "./engine/service.ts";
import { inboxTasks } from "./inbox/service.ts";

/**
 * What a task handler may use: the database and the clock, the queue to add follow-up tasks, the
 * providers' senders (integrations/senders.ts) for email and chat steps, and the limits rendering a
 * step's templates may spend (the config's `render`; the defaults without them).
 */
export interface WorkerDeps extends Deps {
  readonly queue: JobQueue;
  readonly senders?: ChannelSenders | undefined;
  readonly render?: RenderLimits | undefined;
  /** How steps defined in code reach their bridge; without it they fail. */
  readonly bridge?: BridgeOptions | undefined;
}

/** The worker role's registry: the queue runs each task by its name's handler. */
export interface WorkerRegistry extends StartOptions {
  readonly handlers: Record<string, TaskHandler>;
}

/**
 * The tasks this service runs in the worker: the engine's (run a job, fan a trigger out), the
 * inbox's (end a snooze), and what happens to a task given up after its last attempt (its job is
 * marked `failed`). `onMessage` hears of every message that appears in a subscriber's feed: a job's
 * new one, or a snoozed one come back.
 */
export function workerRegistry(deps: WorkerDeps, onMessage?: MessageListener): WorkerRegistry {
  const { render, ...engineDeps } = deps;
  const { handlers, onFailed } = engineTasks({ ...engineDeps, renderer: new Renderer(render) }, onMessage);
  return { handlers: { ...handlers, ...inboxTasks(deps, onMessage) }, onFailed };
}
