import type { Subscriber } from "../../subscribers/domain.ts";
import type { Tenant } from "../../tenancy/tenant.ts";
import type { ExecutionStatus, Job, JobStatus, Notification } from "../domain.ts";
import type { EngineDeps, MessageListener } from "../engine-deps.ts";
import type { NewTask } from "../queue/port.ts";

/**
 * What every step handler is (one file per step type in this folder; `index.ts` picks one). A
 * handler knows nothing of how its job was claimed or how its outcome is recorded: it is given the
 * job, its notification and its subscriber, and answers an outcome, which run-job.ts records.
 */

export type { MessageListener };

/** What a step's handler decided: the job's next status, and what to record. */
export interface StepOutcome {
  status: Extract<JobStatus, "completed" | "skipped" | "failed" | "delayed" | "merged" | "canceled">;
  detail: string;
  executionStatus: ExecutionStatus;
  raw?: string;
  /** For `delayed`: when the job is due (epoch ms). */
  dueAt?: number;
  /** For `delayed`: the task that runs when it is due; default: the job's own run-job task. */
  dueTask?: NewTask;
  /** Stored as the job's `digest` (the window it joined, what it carried). */
  digest?: Record<string, unknown>;
  /** For `failed`: the rest of the run is canceled whatever `shouldStopOnFail` says. */
  stopsRun?: boolean;
}

/**
 * An outcome that can only be decided inside the transaction that records it (a digest: joining a
 * window and being recorded as its member are one step; an in-app message: written and recorded as
 * delivered in one commit). `afterCommit` runs once that transaction has committed.
 */
export interface Deferred {
  inTransaction: (deps: EngineDeps) => Promise<StepOutcome>;
  afterCommit?: () => void;
}

export type StepResult = StepOutcome | Deferred;

/** One step to run: its job, the job's notification, and the subscriber as the job read it. */
export interface StepRun {
  deps: EngineDeps;
  job: Job;
  notification: Notification;
  subscriber: Subscriber;
  onMessage?: MessageListener | undefined;
}

export interface StepHandler {
  /**
   * Whether the step's filters and the subscriber's preferences are asked first (every step but a
   * delay, which, once its time has come, passes on whatever else it is).
   */
  gated: boolean;
  /**
   * Whether the job is claimed (`running`, in a commit of its own) before the step runs: a step that
   * reaches outside the database (an email, a chat message, a call to the app's bridge), which a
   * cancel must not cut off halfway. Every other step is claimed by the one transaction that
   * records its outcome: one commit a job.
   */
  claims: boolean;
  run(step: StepRun): StepResult | Promise<StepResult>;
}

/** The job's environment, as a tenant acting for no one. */
export const tenantOf = (job: Pick<Job, "organizationId" | "environmentId">): Tenant => ({
  organizationId: job.organizationId,
  environmentId: job.environmentId,
  actorId: "",
});
