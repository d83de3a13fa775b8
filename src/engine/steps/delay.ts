import { TIME_UNITS } from "../../workflows/domain.ts";
import type { Job, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { addUnits } from "../time-units.ts";
import type { StepHandler, StepOutcome } from "./handler.ts";

/**
 * The delay step of a stored workflow: for a set amount (the step's, or the trigger's
 * `overrides.delay`), or until a date in the payload (`scheduled`). The job waits `delayed` until it
 * is due, then runs again and passes on. It is not gated: a delay that has waited its time passes on
 * whatever the filters and preferences say, the steps after it ask them.
 */
export const delayStep: StepHandler = {
  gated: false,
  claims: false,
  run: ({ deps, job, notification }) => delay(deps, job, notification),
};

function delay(deps: EngineDeps, job: Job, notification: Notification): StepOutcome {
  const now = deps.clock.now();
  if (job.runAt !== null) {
    const due = Date.parse(job.runAt);
    if (due <= now) return { status: "completed", executionStatus: "Success", detail: "The delay is over" };
    return {
      status: "delayed",
      executionStatus: "Pending",
      detail: `Delayed until ${job.runAt}`,
      dueAt: due,
    };
  }
  const given = notification.overrides.delay;
  const override =
    given === undefined || given === null ? undefined : (given as { amount?: unknown; unit?: unknown });
  const metadata = job.step.metadata;
  if (override !== undefined) {
    const { amount, unit } = typeof override === "object" ? override : {};
    if (
      !Number.isInteger(amount) ||
      (amount as number) <= 0 ||
      !(TIME_UNITS as readonly unknown[]).includes(unit)
    ) {
      return {
        status: "failed",
        executionStatus: "Failed",
        detail: `overrides.delay must be {amount: a positive integer, unit: one of ${TIME_UNITS.join(", ")}}: nothing is sent`,
        stopsRun: true,
      };
    }
  }
  if (metadata.type === "scheduled" && override === undefined) {
    const path = metadata.delayPath ?? "";
    const value = path
      .split(".")
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], notification.payload);
    const due = typeof value === "string" ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(due)) {
      return {
        status: "failed",
        executionStatus: "Failed",
        detail: `payload.${path} is not a date: nothing is sent`,
        stopsRun: true,
      };
    }
    // Judged against the trigger's acceptance, not against when this job happens to run: a date still
    // ahead when the trigger was acknowledged has been promised, and if it passed while the job
    // waited in the queue (a backlog, an earlier step), the message goes now rather than never.
    if (due < Date.parse(notification.createdAt)) {
      return {
        status: "failed",
        executionStatus: "Failed",
        detail: `payload.${path} (${new Date(due).toISOString()}) was already in the past when the trigger was accepted: nothing is sent`,
        stopsRun: true,
      };
    }
    if (due <= now) {
      return {
        status: "completed",
        executionStatus: "Success",
        detail: `The scheduled time ${new Date(due).toISOString()} passed while the step waited: sending now`,
      };
    }
    return {
      status: "delayed",
      executionStatus: "Pending",
      detail: `Delayed until ${new Date(due).toISOString()}`,
      dueAt: due,
    };
  }
  const amount = typeof override?.amount === "number" ? override.amount : metadata.amount;
  const unit = (typeof override?.unit === "string" ? override.unit : metadata.unit) as typeof metadata.unit;
  let due: number;
  try {
    due = addUnits(now, amount, unit);
  } catch (error) {
    return {
      status: "failed",
      executionStatus: "Failed",
      detail: `A delay of ${amount} ${unit} cannot be waited: nothing is sent`,
      raw: String(error),
      stopsRun: true,
    };
  }
  return {
    status: "delayed",
    executionStatus: "Pending",
    detail: `Delayed ${amount} ${unit}, until ${new Date(due).toISOString()}`,
    dueAt: due,
  };
}
