import { createHash } from "node:crypto";
import { sql } from "kysely";
import { dialectOf } from "../../store/values.ts";
import type { TimeUnit } from "../../workflows/domain.ts";
import type { Job, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { addUnits } from "../time-units.ts";
import type { StepHandler, StepOutcome } from "./handler.ts";

/**
 * Throttle steps (docs/engine.md, "Delays and digests"): at most `threshold` runs of the workflow's step per
 * subscriber (and per value of the throttle key, when there is one) within a window of `amount` ×
 * `unit` before now; a run past it ends there, `canceled` with "Throttled" in its execution detail,
 * and its later steps are canceled. A run let through is counted in `throttle_passes`, in the same
 * transaction that records the step's outcome, under the key's lock: two runs racing for the last
 * place cannot both have it, and a run recorded once is never counted twice.
 */

export interface ThrottleSettings {
  amount: number;
  unit: TimeUnit;
  threshold: number;
  /** The value that splits the count ("" for none): a payload path's value, or a code step's own key. */
  keyValue: string;
}

/** A stored throttle step's settings, from its metadata. */
export function throttleSettingsOf(job: Job, notification: Notification): ThrottleSettings {
  const { metadata } = job.step;
  const path = metadata.throttleKey ?? "";
  const value =
    path === ""
      ? undefined
      : path
          .split(".")
          .reduce<unknown>(
            (at, key) =>
              at !== null && typeof at === "object" ? (at as Record<string, unknown>)[key] : undefined,
            notification.payload,
          );
  return {
    amount: metadata.amount,
    unit: metadata.unit,
    threshold: metadata.threshold ?? 1,
    keyValue: value === undefined ? "" : JSON.stringify(value),
  };
}

/** The throttle step of a stored workflow: counted in the recording transaction. */
export const throttleStep: StepHandler = {
  gated: true,
  claims: false,
  run: ({ job, notification }) => {
    const settings = throttleSettingsOf(job, notification);
    return { inTransaction: (trxDeps) => passThrottle(trxDeps, job, settings) };
  },
};

const LOCK_SPACE = 7_341;

/** Inside the transaction that records the step's outcome (run-job.ts `finish`). */
export async function passThrottle(
  deps: EngineDeps,
  job: Job,
  settings: ThrottleSettings,
): Promise<StepOutcome> {
  const { db } = deps;
  const now = deps.clock.now();
  if (!(settings.amount > 0) || !(settings.threshold >= 1)) {
    return {
      status: "failed",
      executionStatus: "Failed",
      detail: `A throttle needs a window (amount ${settings.amount} ${settings.unit}) and a threshold of at least 1 (${settings.threshold})`,
      stopsRun: true,
    };
  }
  const key = createHash("sha256")
    .update(
      JSON.stringify([job.environmentId, job.workflowId, job.step._id, job.subscriberRef, settings.keyValue]),
    )
    .digest("hex");
  if (dialectOf(db) === "postgres") {
    await sql`select pg_advisory_xact_lock(${LOCK_SPACE}::int, ${Number.parseInt(key.slice(0, 8), 16) | 0}::int)`.execute(
      db,
    );
  }
  const windowStart = new Date(addUnits(now, -settings.amount, settings.unit)).toISOString();
  const counted = await db
    .selectFrom("throttle_passes")
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
    .where("throttle_key", "=", key)
    .where("created_at", ">", windowStart)
    .where("job_id", "<>", job.id)
    .executeTakeFirstOrThrow();
  const executionCount = Number(counted.n);
  const result = {
    throttled: executionCount >= settings.threshold,
    executionCount,
    threshold: settings.threshold,
    windowStart,
  };
  const window = `${settings.amount} ${settings.unit}`;
  if (result.throttled) {
    return {
      status: "canceled",
      executionStatus: "Warning",
      detail: `Throttled: ${executionCount} run${executionCount === 1 ? "" : "s"} in the last ${window} (threshold ${settings.threshold}); the rest of the run is skipped`,
      digest: { bridge: { outputs: result } },
    };
  }
  await db
    .insertInto("throttle_passes")
    .values({
      job_id: job.id,
      environment_id: job.environmentId,
      throttle_key: key,
      created_at: new Date(now).toISOString(),
    })
    .onConflict((c) => c.column("job_id").doNothing())
    .execute();
  return {
    status: "completed",
    executionStatus: "Success",
    detail: `Not throttled: run ${executionCount + 1} of at most ${settings.threshold} in ${window}`,
    digest: { bridge: { outputs: result } },
  };
}
