import type { BridgeOptions } from "../bridge-client.ts";
import type { Quotas } from "../config.ts";
import type { Deps } from "../deps.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import type { ChannelSenders } from "./channel-senders.ts";
import type { Message } from "./domain.ts";
import type { JobQueue, NewTask } from "./queue/port.ts";
import type { Renderer } from "./renderer.ts";

/**
 * The engine's dependencies: the services' ones, the queue its work goes through, and (in the
 * worker) the providers' senders; without them an email or chat step finds no integration. The
 * renderer renders the steps' templates within the configured limits (default ones without it).
 */
export interface EngineDeps extends Deps {
  readonly queue: JobQueue;
  readonly senders?: ChannelSenders | undefined;
  readonly renderer?: Renderer | undefined;
  /** The environments' quotas a trigger must fit (src/engine/quotas.ts); none when absent. */
  readonly quotas?: Quotas | undefined;
  /** How steps defined in code reach their bridge (src/bridge-client.ts); without it they fail. */
  readonly bridge?: BridgeOptions | undefined;
  /** Told of each in-app message a trigger delivers in its acknowledgement, once it has committed. */
  readonly onMessage?: MessageListener | undefined;
}

/** The engine's dependencies on another handle: a transaction, or a piece of pipelined work in one. */
export const engineOnConnection = (deps: EngineDeps, db: Deps["db"]): EngineDeps => ({ ...deps, db });

/** The queue's task names: one per kind of work, each handled by one function (worker.ts). */
export const TASKS = {
  runJob: "engine.run-job",
  fanOut: "engine.fan-out",
  closeDigest: "engine.close-digest",
} as const;

/** The task that runs a job; keyed by the job, so a job is never queued twice at once. */
export const runJobTask = (jobId: string, runAt?: number): NewTask => ({
  task: TASKS.runJob,
  payload: { jobId },
  key: `job:${jobId}`,
  ...(runAt !== undefined ? { runAt } : {}),
});

/**
 * Told when a job's message is created, so the inbox can tell the subscriber's sockets. `written`
 * is the message as stored and its subscriber as the job read it: a listener in this process need
 * not read them again.
 */
export type MessageListener = (event: {
  environmentId: string;
  subscriberRef: string;
  messageId: string;
  written?: { message: Message; subscriber: Subscriber };
}) => void;
