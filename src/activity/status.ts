import type { JobStatus } from "../engine/domain.ts";

/**
 * A notification's status at a glance, from its jobs' (one rule, which the list's `status` filter
 * follows in SQL, repository.ts): `failed` when a job failed; else `pending` while a job has still to
 * run; else `canceled` when one was canceled; else `delivered` when one completed (or was merged into
 * a digest that went on); else `skipped` (every step skipped: preferences, filters, no provider).
 */
export const NOTIFICATION_STATUSES = ["delivered", "failed", "skipped", "canceled", "pending"] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

export const STILL_RUNNING: readonly JobStatus[] = ["pending", "queued", "running", "delayed"];
export const DONE: readonly JobStatus[] = ["completed", "merged"];

export function notificationStatus(jobs: readonly string[]): NotificationStatus {
  if (jobs.includes("failed")) return "failed";
  if (jobs.some((s) => (STILL_RUNNING as readonly string[]).includes(s))) return "pending";
  if (jobs.includes("canceled")) return "canceled";
  if (jobs.some((s) => (DONE as readonly string[]).includes(s))) return "delivered";
  return "skipped";
}

/**
 * The same rule as job statuses a notification must have one of (`some`) and must have none of
 * (`none`), for the repository's EXISTS / NOT EXISTS.
 */
export function statusCondition(status: NotificationStatus): { some?: JobStatus[]; none: JobStatus[] } {
  switch (status) {
    case "failed":
      return { some: ["failed"], none: [] };
    case "pending":
      return { some: [...STILL_RUNNING], none: ["failed"] };
    case "canceled":
      return { some: ["canceled"], none: ["failed", ...STILL_RUNNING] };
    case "delivered":
      return { some: [...DONE], none: ["failed", ...STILL_RUNNING, "canceled"] };
    case "skipped":
      return { none: ["failed", ...STILL_RUNNING, "canceled", ...DONE] };
  }
}
