import type { FastifyInstance } from "fastify";
import type { Quotas } from "../config.ts";
import type { Deps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import * as quota from "./quota-repository.ts";

export type { Quotas };

/**
 * Each environment's triggers are held to quotas (README, "Quotas"; the limits in src/config.ts):
 * how many subscribers one trigger may reach, how many its triggers may reach in a minute, and how
 * many of its jobs may wait or run at once. They are checked in the trigger's accept transaction,
 * before the acknowledgement: a trigger past one is refused whole, and nothing of it is written.
 */

const MINUTE = 60_000;
/** How long a client is asked to wait when the environment has too many jobs: they drain as the worker runs them. */
const OPEN_JOBS_RETRY_AFTER_S = 30;

/** A refusal by a quota: 422 when no retry can help (the trigger is too large), 429 with Retry-After when one can. */
export class QuotaExceeded extends ApiError {
  override name = "QuotaExceeded";
}

const tooLarge = (message: string) =>
  new QuotaExceeded(422, `quota_exceeded: ${message}`, [
    { field: "to", message: `quota_exceeded: ${message}` },
  ]);
const tooMany = (message: string, retryAfterS: number) =>
  new QuotaExceeded(429, `quota_exceeded: ${message}`, undefined, { "retry-after": String(retryAfterS) });

/** What a trigger adds: the subscribers it reaches, and the jobs that will wait or run for them. */
export interface TriggerLoad {
  recipients: number;
  jobs: number;
}

const anyQuota = (quotas: Quotas | undefined): quotas is Quotas =>
  quotas !== undefined &&
  (quotas.recipientsPerTrigger > 0 || quotas.recipientsPerMinute > 0 || quotas.pendingJobs > 0);

/**
 * How far a trigger's recipients are worth counting: one past the most any quota lets a trigger
 * reach, so that "too many" shows whatever a topic holds while the count stays bounded; undefined
 * when no quota applies (nothing is counted).
 */
export function recipientsWorthCounting(
  quotas: Quotas | undefined,
  jobsPerRecipient: number,
): number | undefined {
  if (!anyQuota(quotas)) return undefined;
  const limits = [quotas.recipientsPerTrigger, quotas.recipientsPerMinute].filter((limit) => limit > 0);
  if (quotas.pendingJobs > 0 && jobsPerRecipient > 0)
    limits.push(Math.floor(quotas.pendingJobs / jobsPerRecipient));
  return limits.length === 0 ? undefined : Math.min(...limits) + 1;
}

/**
 * What no retry can make fit (422): a trigger larger than one trigger may be, than a minute allows,
 * or than the jobs the environment may have; for a bulk call, its events together larger than a
 * minute allows or than those jobs (each event is held to the one trigger's quota on its own).
 */
export function checkTriggerSize(
  quotas: Quotas | undefined,
  load: TriggerLoad,
  scope: "trigger" | "bulk" = "trigger",
): void {
  const problem = sizeProblem(quotas, load, scope);
  if (problem) throw problem;
}

/** Whether a trigger fits what one trigger may be (checkTriggerSize would let it through). */
export const fitsOneTrigger = (quotas: Quotas | undefined, load: TriggerLoad): boolean =>
  sizeProblem(quotas, load, "trigger") === undefined;

function sizeProblem(
  quotas: Quotas | undefined,
  load: TriggerLoad,
  scope: "trigger" | "bulk",
): QuotaExceeded | undefined {
  if (!anyQuota(quotas)) return undefined;
  const { recipientsPerTrigger, recipientsPerMinute, pendingJobs } = quotas;
  const what = scope === "trigger" ? "the trigger" : "this bulk call";
  const advice = scope === "trigger" ? "" : ": send fewer events per call";
  if (scope === "trigger" && recipientsPerTrigger > 0 && load.recipients > recipientsPerTrigger)
    return tooLarge(
      `the trigger would reach more than ${recipientsPerTrigger} subscribers, the most one trigger may reach ` +
        "(QUOTA_RECIPIENTS_PER_TRIGGER)",
    );
  if (recipientsPerMinute > 0 && load.recipients > recipientsPerMinute)
    return tooLarge(
      `${what} would reach more than ${recipientsPerMinute} subscribers, the most the environment may ` +
        `reach in a minute (QUOTA_RECIPIENTS_PER_MINUTE)${advice}`,
    );
  if (pendingJobs > 0 && load.jobs > pendingJobs)
    return tooLarge(
      `${what} would make more than ${pendingJobs} jobs, the most the environment may have waiting ` +
        `or running (QUOTA_PENDING_JOBS)${advice}`,
    );
  return undefined;
}

/**
 * The environment's jobs not yet final with the trigger's added (429). Read from counters, not
 * counted: concurrent triggers may together pass the quota by what they add.
 */
async function checkOpenJobs(
  deps: Deps,
  tenant: Tenant,
  quotas: Quotas,
  jobs: number,
  what: string,
): Promise<void> {
  const { pendingJobs } = quotas;
  if (pendingJobs === 0 || jobs === 0) return;
  const open = await quota.openJobs(deps.db, tenant.environmentId);
  if (open + jobs > pendingJobs)
    throw tooMany(
      `the environment has ${open} jobs waiting or running, and ${what} ${jobs} would pass ` +
        `the ${pendingJobs} it may have (QUOTA_PENDING_JOBS); retry once the worker has run them`,
      OPEN_JOBS_RETRY_AFTER_S,
    );
}

/**
 * The environment's jobs not yet final with the trigger's added: 429 past QUOTA_PENDING_JOBS. Its
 * size is checked first, before anything is written (checkTriggerSize: retrying cannot make it
 * fit); this read may go out with the trigger's first writes, which a refusal rolls back.
 */
export async function checkTriggerJobs(
  deps: Deps,
  tenant: Tenant,
  quotas: Quotas | undefined,
  load: TriggerLoad,
): Promise<void> {
  if (!anyQuota(quotas)) return;
  await checkOpenJobs(deps, tenant, quotas, load.jobs, "this trigger's");
}

/**
 * Counts the trigger's recipients into the environment's current minute; 429, with Retry-After
 * until the next minute, past its quota. Last in the accept transaction (it goes out with the
 * runs' writes): the environment's count row is held from here to the commit.
 */
export async function spendRecipients(
  deps: Deps,
  tenant: Tenant,
  quotas: Quotas | undefined,
  recipients: number,
  what = "this trigger's",
): Promise<void> {
  if (!quotas || quotas.recipientsPerMinute === 0 || recipients === 0) return;
  const now = deps.clock.now();
  const minute = Math.floor(now / MINUTE);
  const limit = quotas.recipientsPerMinute;
  if (await quota.spendRecipients(deps.db, tenant.environmentId, minute, recipients, limit)) return;
  const used = await quota.recipientsIn(deps.db, tenant.environmentId, minute);
  const retryAfter = Math.max(1, Math.ceil(((minute + 1) * MINUTE - now) / 1000));
  throw tooMany(
    `the environment's triggers reached ${used} subscribers this minute, and ${what} ${recipients} ` +
      `would pass the ${limit} a minute allows (QUOTA_RECIPIENTS_PER_MINUTE); retry in ${retryAfter} s`,
    retryAfter,
  );
}

/**
 * The quotas' part of a bulk call, which they take whole or not at all: the events' recipients are
 * counted into the minute together, in one statement, before any is accepted, and their jobs
 * checked together; past either, the call is refused (429, or 422 when it alone is more than a
 * quota allows) and no event is accepted. An event then refused at its turn for a reason the count
 * could not foresee (its topic deleted meanwhile) stays counted to the end of the minute: the count
 * errs on the side of the quota.
 */
export async function spendBulk(
  deps: Deps,
  tenant: Tenant,
  quotas: Quotas | undefined,
  total: TriggerLoad,
  events: number,
): Promise<void> {
  if (!anyQuota(quotas)) return;
  const what = `these ${events} triggers'`;
  checkTriggerSize(quotas, total, "bulk");
  await checkOpenJobs(deps, tenant, quotas, total.jobs, what);
  await spendRecipients(deps, tenant, quotas, total.recipients, what);
}

/**
 * A fan-out trigger (topics, a broadcast, a long list) writes its jobs after the acknowledgement, a
 * batch at a time: at its acceptance it reserves them in the environment's open jobs, so that the
 * triggers accepted meanwhile count them as if written, and each batch releases what it wrote (the
 * triggers on `jobs` count those from then on). The reservation is the count the quota check made;
 * the last batch releases whatever of it is left (members held back by their subscription, the actor).
 */
export async function reserveFanOutJobs(deps: Deps, environmentId: string, jobs: number): Promise<void> {
  await quota.adjustOpenJobs(deps.db, environmentId, jobs);
}

/** Releases `jobs` of a fan-out's reservation (reserveFanOutJobs): they are written, or will never be. */
export async function releaseFanOutJobs(deps: Deps, environmentId: string, jobs: number): Promise<void> {
  await quota.adjustOpenJobs(deps.db, environmentId, -jobs);
}

/** How often each PostgreSQL process folds the open-jobs rows of closed connections (real time). */
export const FOLD_INTERVAL_MS = 10 * 60 * 1000;

/**
 * PostgreSQL: every FOLD_INTERVAL_MS, folds the open-jobs counts of connections that have closed
 * (restarts, pools that shrank) into one row per environment; nothing to do on SQLite. Off the
 * request path, like the idempotency purge; stops (and waits) when the app closes.
 */
export function registerOpenJobsFolding(
  app: FastifyInstance,
  store: { backend: "sqlite" | "postgres"; db: Deps["db"] },
  intervalMs = FOLD_INTERVAL_MS,
): void {
  if (store.backend !== "postgres") return;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= quota
      .foldClosedConnections(store.db)
      .then((folded) => {
        if (folded > 0) app.log.debug({ folded }, "folded the open-job counts of closed connections");
      })
      .catch((error: unknown) => app.log.warn({ err: error }, "could not fold the open-job counts"))
      .finally(() => {
        running = undefined;
      });
  };
  app.addHook("onReady", async () => {
    timer = setInterval(run, intervalMs);
    timer.unref();
  });
  app.addHook("onClose", async () => {
    clearInterval(timer);
    await running;
  });
}
