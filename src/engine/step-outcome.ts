import type { ExecutionStatus, JobStatus } from "./domain.ts";
import type { NewTask } from "./queue/port.ts";

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
