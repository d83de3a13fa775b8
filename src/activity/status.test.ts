import assert from "node:assert/strict";
import { test } from "node:test";
import { JOB_STATUSES } from "../engine/domain.ts";
import { NOTIFICATION_STATUSES, notificationStatus, statusCondition } from "./status.ts";

test("a notification's status from its jobs: failed, then pending, canceled, delivered, else skipped", () => {
  const cases: [string[], string][] = [
    [["completed", "failed", "canceled"], "failed"],
    [["failed", "delayed"], "failed"],
    [["completed", "delayed"], "pending"],
    [["queued"], "pending"],
    [["running", "canceled"], "pending"],
    [["completed", "canceled"], "canceled"],
    [["completed", "skipped"], "delivered"],
    [["merged"], "delivered"],
    [["skipped", "skipped"], "skipped"],
    [[], "skipped"],
  ];
  for (const [jobs, status] of cases) assert.equal(notificationStatus(jobs), status, jobs.join(", "));
});

test("the filter's conditions say the same as the rule, for every set of job statuses", () => {
  // Every subset of the job statuses (2^9): the one status whose condition holds is the rule's.
  for (let mask = 0; mask < 1 << JOB_STATUSES.length; mask++) {
    const jobs = JOB_STATUSES.filter((_, i) => mask & (1 << i));
    const holding = NOTIFICATION_STATUSES.filter((status) => {
      const { some, none } = statusCondition(status);
      return (!some || some.some((s) => jobs.includes(s))) && none.every((s) => !jobs.includes(s));
    });
    assert.deepEqual(holding, [notificationStatus(jobs)], jobs.join(", "));
  }
});
