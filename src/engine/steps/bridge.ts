import { BridgeError, callBridge } from "../../bridge-client.ts";
import { isoNow } from "../../clock.ts";
import type { Subscriber } from "../../subscribers/domain.ts";
import { environmentSecretKey, getBridgeUrl } from "../../tenancy/service.ts";
import { TIME_UNITS, type TimeUnit } from "../../workflows/domain.ts";
import * as windows from "../digest-repository.ts";
import type { Job, MessageButton, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { jobMessages } from "../message-repository.ts";
import { newMessage } from "../records.ts";
import * as engine from "../repository.ts";
import { addUnits, nextCronOccurrence } from "../time-units.ts";
import { deliverChat } from "./chat.ts";
import { arriveAtDigest } from "./digest.ts";
import { deliverEmail } from "./email.ts";
import type { MessageListener, StepHandler, StepOutcome, StepResult, StepRun } from "./handler.ts";
import { writeInApp } from "./in-app.ts";
import { passThrottle } from "./throttle.ts";

/**
 * Steps of workflows defined in code (docs/bridge.md): each runs through the app's bridge. The
 * engine asks it (`POST bridgeUrl?action=execute&workflowId=…&stepId=…`, signed) with the payload,
 * the step's stored control values, the subscriber and the results of every earlier step of the run,
 * and gets the step's outputs back: the content of a channel step, which goes out through this
 * service's own integrations; the timing of a delay, a digest or a throttle, which this engine then
 * waits, merges or counts durably as it does for stored workflows; the outputs of a custom step,
 * kept for the steps after it. `options.skip` skips the step.
 *
 * The call is made before the transaction that records the outcome, never inside one. A job run
 * again (a crash, a retried task) asks again and finds what it delivered already recorded: an
 * email or chat message is not sent twice, an in-app message is unique per job, a delay that has
 * its due time does not ask again, a digest event already in its window stays there.
 */

/** The bridge's answer to an execute call. */
interface Executed {
  outputs: Record<string, unknown>;
  skip: boolean;
}

/** A step's entry in the `state` of later calls: what it produced, and how it ended. */
interface StepState {
  stepId: string;
  outputs: Record<string, unknown>;
  state: { status: string; error?: string };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

interface Failure extends StepOutcome {
  status: "failed";
}

const failed = (detail: string, raw = ""): Failure => ({
  status: "failed",
  executionStatus: "Failed",
  detail,
  raw,
  // The steps after it would be called with a state the framework refuses: the run stops here.
  stopsRun: true,
});

/** What earlier steps of the run produced, as the framework reads them (their results). */
async function stateOf(deps: EngineDeps, job: Job): Promise<StepState[]> {
  if (job.stepIndex === 0) return [];
  const jobs = (await engine.jobsOfNotifications(deps.db, [job.notificationId]))
    .filter((j) => j.stepIndex < job.stepIndex && j.step.code !== undefined)
    .sort((a, b) => a.stepIndex - b.stepIndex);
  const states: StepState[] = [];
  for (const earlier of jobs) {
    const kept = isObject(earlier.digest.bridge) ? earlier.digest.bridge : {};
    const keptOutputs = isObject(kept.outputs) ? kept.outputs : {};
    let outputs: Record<string, unknown>;
    switch (earlier.step.code?.type) {
      case "delay":
        outputs = { duration: typeof keptOutputs.duration === "number" ? keptOutputs.duration : 0 };
        break;
      case "digest": {
        const windowId = earlier.digest.windowId;
        const events = typeof windowId === "string" ? await windows.eventRecords(deps.db, windowId) : [];
        outputs = { events, eventCount: events.length };
        break;
      }
      case "in_app": {
        const [message] = await jobMessages(deps.db, earlier.id);
        outputs = {
          seen: message?.seen ?? false,
          read: message?.read ?? false,
          lastSeenDate: message?.lastSeenDate ?? null,
          lastReadDate: message?.lastReadDate ?? null,
        };
        break;
      }
      case "custom":
      case "http_request":
      case "tool":
      case "throttle":
        outputs = keptOutputs;
        break;
      default:
        outputs = {};
    }
    states.push({
      stepId: earlier.step.stepId ?? earlier.step._id,
      outputs,
      state: { status: earlier.status, ...(earlier.status === "failed" ? { error: "the step failed" } : {}) },
    });
  }
  return states;
}

/** The subscriber as the app sees it (Novu's fields): none of this service's own ids or dates. */
function subscriberForBridge(subscriber: Subscriber): Record<string, unknown> {
  const { subscriberId, firstName, lastName, email, phone, avatar, locale, timezone, data } = subscriber;
  return { subscriberId, firstName, lastName, email, phone, avatar, locale, timezone, data };
}

/**
 * The environment's bridge URL and signing key, read at most once a second per environment and
 * process: a step's reads on SQLite wait for the group commit they join, and every step of a busy
 * environment would read the same two values. A sync's new URL is used within a second.
 */
const BRIDGE_OF_TTL_MS = 1_000;
const bridges = new Map<
  string,
  { readAt: number; found: Promise<{ bridgeUrl: string; secretKey: string | undefined }> }
>();

function bridgeOf(deps: EngineDeps, environmentId: string) {
  const now = Date.now();
  const kept = bridges.get(environmentId);
  if (kept && now - kept.readAt < BRIDGE_OF_TTL_MS) return kept.found;
  const found = Promise.all([
    getBridgeUrl(deps, environmentId),
    environmentSecretKey(deps, environmentId, deps.secrets),
  ]).then(([bridgeUrl, secretKey]) => ({ bridgeUrl, secretKey }));
  // A failed read is not kept.
  found.catch(() => bridges.delete(environmentId));
  if (bridges.size > 10_000) bridges.clear();
  bridges.set(environmentId, { readAt: now, found });
  return found;
}

/** One signed execute call for the job's step, with its retries; a failed outcome when it cannot be made. */
async function execute(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
): Promise<Executed | Failure> {
  if (!deps.bridge)
    return failed("This process cannot call bridges (no bridge options were given to the worker)");
  const { bridgeUrl, secretKey } = await bridgeOf(deps, job.environmentId);
  if (bridgeUrl === "")
    return failed("The environment has no bridge URL: sync the app's bridge (POST /v1/bridge/sync)");
  if (secretKey === undefined)
    return failed("The environment has no API key this service can open to sign the bridge call");
  const workflowId = notification.workflow.identifier;
  const stepId = job.step.stepId ?? job.step._id;
  const body = {
    workflowId,
    stepId,
    action: "execute",
    payload: notification.payload,
    controls: job.step.code?.controlValues ?? {},
    subscriber: subscriberForBridge(subscriber),
    state: await stateOf(deps, job),
    context: {},
    env: {},
  };
  let answer: unknown;
  try {
    answer = await callBridge(
      { url: bridgeUrl, action: "execute", workflowId, stepId, body, secretKey },
      deps.bridge,
    );
  } catch (error) {
    if (error instanceof BridgeError) return failed(`The bridge call failed: ${error.message}`);
    throw error;
  }
  if (!isObject(answer)) return failed("The bridge answered something that is not an execution result");
  const options = isObject(answer.options) ? answer.options : {};
  return { outputs: isObject(answer.outputs) ? answer.outputs : {}, skip: options.skip === true };
}

const skippedByApp: StepOutcome & { status: "skipped" } = {
  status: "skipped",
  executionStatus: "Success",
  detail: "Skipped: the step's skip condition in the app held",
};

/**
 * Runs a step defined in code (the job's step has `code`). Called by run-job.ts once the step is
 * known to run: active, with its subscriber, past the preferences for a channel step.
 */
export async function runCodeStep(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  onMessage: MessageListener | undefined,
): Promise<StepResult> {
  const type = job.step.code?.type ?? job.type;
  // A delay that has its due time waits it out without asking again.
  if (type === "delay" && job.runAt !== null) return delayDue(deps, job.runAt);
  switch (type) {
    case "email":
      return deliverEmail(deps, job, notification, subscriber, async () => {
        const done = await execute(deps, job, notification, subscriber);
        if ("status" in done) return done;
        if (done.skip) return skippedByApp;
        const { subject, body } = done.outputs;
        return {
          subject: typeof subject === "string" ? subject : "",
          html: typeof body === "string" ? body : "",
          senderName:
            isObject(done.outputs.from) && typeof done.outputs.from.name === "string"
              ? done.outputs.from.name
              : "",
          problems: [],
        };
      });
    case "chat":
      return deliverChat(deps, job, notification, subscriber, async () => {
        const done = await execute(deps, job, notification, subscriber);
        if ("status" in done) return done;
        if (done.skip) return skippedByApp;
        return { text: typeof done.outputs.body === "string" ? done.outputs.body : "" };
      });
    case "sms":
    case "push":
      return {
        status: "skipped",
        executionStatus: "Warning",
        detail: `No active ${type} integration in this environment`,
      };
    default:
      break;
  }
  const done = await execute(deps, job, notification, subscriber);
  if ("status" in done) return done;
  if (done.skip) return skippedByApp;
  const { outputs } = done;
  switch (type) {
    case "in_app":
      return inAppMessage(job, notification, subscriber, outputs, isoNow(deps.clock), onMessage);
    case "delay":
      return delayFor(deps, notification, outputs);
    case "digest":
      return digestFor(job, notification, outputs);
    case "throttle":
      return throttleFor(job, notification, outputs);
    default:
      return {
        status: "completed",
        executionStatus: "Success",
        detail: `The ${type} step ran in the app; its outputs are kept for the steps after it`,
        raw: JSON.stringify(outputs).slice(0, 2000),
        digest: { bridge: { outputs } },
      };
  }
}

function delayDue(deps: EngineDeps, runAt: string): StepOutcome {
  const due = Date.parse(runAt);
  if (due <= deps.clock.now())
    return { status: "completed", executionStatus: "Success", detail: "The delay is over" };
  return { status: "delayed", executionStatus: "Pending", detail: `Delayed until ${runAt}`, dueAt: due };
}

const isUnit = (value: unknown): value is TimeUnit => (TIME_UNITS as readonly unknown[]).includes(value);

/** The value at a payload path, written with or without its `payload.` prefix. */
function payloadValue(payload: Record<string, unknown>, path: string): unknown {
  const keys = path.replace(/^payload\./, "").split(".");
  return keys.reduce<unknown>((at, key) => (isObject(at) ? at[key] : undefined), payload);
}

/** When a delay the bridge timed is due (epoch ms), or why it cannot be waited. */
function dueOf(now: number, notification: Notification, outputs: Record<string, unknown>): number | string {
  const type = outputs.type ?? "regular";
  if (type === "regular") {
    const { amount, unit } = outputs;
    if (typeof amount !== "number" || !(amount >= 0) || !isUnit(unit))
      return `the bridge answered a delay without an amount and a unit (${JSON.stringify(outputs)})`;
    return addUnits(now, amount, unit);
  }
  if (type === "dynamic" && typeof outputs.dynamicKey === "string") {
    const value = payloadValue(notification.payload, outputs.dynamicKey);
    if (typeof value === "string" && !Number.isNaN(Date.parse(value))) return Date.parse(value);
    if (isObject(value) && typeof value.amount === "number" && isUnit(value.unit))
      return addUnits(now, value.amount, value.unit);
    return `payload.${outputs.dynamicKey.replace(/^payload\./, "")} is neither a date nor {amount, unit}`;
  }
  if (type === "timed") {
    const cron = cronOf(outputs);
    return typeof cron === "string" ? cronDue(cron, now) : cron.reason;
  }
  return `the bridge answered a delay of type ${JSON.stringify(type)}, which is not regular, timed or dynamic`;
}

/** The cron expression of a timed delay or digest, or why the bridge's answer has none. */
function cronOf(outputs: Record<string, unknown>): string | { reason: string } {
  const { cron } = outputs;
  if (typeof cron === "string" && cron.trim() !== "") return cron;
  return {
    reason: `the bridge answered a timed step without a cron expression (${JSON.stringify(outputs)})`,
  };
}

/** The cron's next occurrence after `now` (UTC, epoch ms), or why the expression is refused. */
function cronDue(cron: string, now: number): number | string {
  try {
    return nextCronOccurrence(cron, now);
  } catch (error) {
    return `the cron expression ${JSON.stringify(cron)} is not valid (${error instanceof Error ? error.message : String(error)})`;
  }
}

function delayFor(
  deps: EngineDeps,
  notification: Notification,
  outputs: Record<string, unknown>,
): StepOutcome {
  const now = deps.clock.now();
  let due: number | string;
  try {
    due = dueOf(now, notification, outputs);
  } catch (error) {
    due = String(error);
  }
  if (typeof due === "string") return failed(`The delay cannot be waited: ${due}: nothing is sent`);
  const duration = Math.max(0, due - now);
  const digest = { bridge: { outputs: { duration } } };
  if (due <= now)
    return { status: "completed", executionStatus: "Success", detail: "No delay left to wait", digest };
  return {
    status: "delayed",
    executionStatus: "Pending",
    detail: `Delayed ${duration / 1000} s by the bridge, until ${new Date(due).toISOString()}`,
    dueAt: due,
    digest,
  };
}

/** A key the bridge answered: the payload's value at that path when there is one, else the key itself. */
function keyValueOf(notification: Notification, key: unknown): string {
  if (typeof key !== "string" || key === "") return "";
  const value = payloadValue(notification.payload, key);
  return value === undefined ? JSON.stringify(key) : JSON.stringify(value);
}

function digestFor(job: Job, notification: Notification, outputs: Record<string, unknown>): StepResult {
  const { amount, unit, lookBackWindow } = outputs;
  const digestKey = typeof outputs.digestKey === "string" ? outputs.digestKey : "";
  const digestValue = keyValueOf(notification, digestKey);
  if (outputs.type === "timed") {
    // The window closes at the cron's next occurrence after the event that opens it.
    const cron = cronOf(outputs);
    if (typeof cron !== "string")
      return failed(`The digest cannot be timed: ${cron.reason}: nothing is sent`);
    // Refused here, before the transaction: whether it parses does not depend on the instant.
    const valid = cronDue(cron, 0);
    if (typeof valid === "string") return failed(`The digest cannot be timed: ${valid}: nothing is sent`);
    // Not read: `closesAfter` times the window, and a cron digest has no backoff.
    const settings = {
      amount: 0,
      unit: "seconds" as TimeUnit,
      backoff: false,
      backoffAmount: 0,
      backoffUnit: "seconds" as TimeUnit,
    };
    return {
      inTransaction: (trxDeps) =>
        arriveAtDigest(trxDeps, job, notification, {
          settings,
          digestKey,
          digestValue,
          closesAfter: (now) => nextCronOccurrence(cron, now),
        }),
    };
  }
  if ((outputs.type ?? "regular") !== "regular")
    return failed(
      `The bridge answered a digest of type ${JSON.stringify(outputs.type)}, which is not regular or timed: nothing is sent`,
    );
  if (typeof amount !== "number" || !(amount > 0) || !isUnit(unit))
    return failed(`The bridge answered a digest without an amount and a unit (${JSON.stringify(outputs)})`);
  const back = isObject(lookBackWindow) ? lookBackWindow : undefined;
  const settings = {
    amount,
    unit,
    backoff: back !== undefined,
    backoffAmount: typeof back?.amount === "number" ? back.amount : 0,
    backoffUnit: isUnit(back?.unit) ? back.unit : ("seconds" as TimeUnit),
  };
  return {
    inTransaction: (trxDeps) =>
      arriveAtDigest(trxDeps, job, notification, { settings, digestKey, digestValue }),
  };
}

function throttleFor(job: Job, notification: Notification, outputs: Record<string, unknown>): StepResult {
  let { amount, unit } = outputs;
  if (outputs.type === "dynamic" && typeof outputs.dynamicKey === "string") {
    const value = payloadValue(notification.payload, outputs.dynamicKey);
    if (isObject(value)) ({ amount, unit } = value);
  }
  if (typeof amount !== "number" || !isUnit(unit))
    return failed(`The bridge answered a throttle without an amount and a unit (${JSON.stringify(outputs)})`);
  const threshold = typeof outputs.threshold === "number" ? outputs.threshold : 1;
  const keyValue = keyValueOf(notification, outputs.throttleKey);
  return { inTransaction: (trxDeps) => passThrottle(trxDeps, job, { amount, unit, threshold, keyValue }) };
}

/** An in-app message from the bridge's outputs, written with the job's outcome (as run-job's own). */
function inAppMessage(
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  outputs: Record<string, unknown>,
  now: string,
  onMessage: MessageListener | undefined,
): StepResult {
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  const redirect = isObject(outputs.redirect) ? outputs.redirect : undefined;
  const buttons: MessageButton[] = [];
  for (const [type, action] of [
    ["primary", outputs.primaryAction],
    ["secondary", outputs.secondaryAction],
  ] as const) {
    if (!isObject(action) || typeof action.label !== "string") continue;
    const to = isObject(action.redirect) ? action.redirect : undefined;
    buttons.push({
      type,
      content: action.label,
      ...(typeof to?.url === "string" ? { url: to.url } : {}),
      ...(typeof to?.target === "string" ? { target: to.target } : {}),
    });
  }
  const message = newMessage(job, notification, subscriber, now, {
    channel: "in_app",
    content: text(outputs.body),
    subject: text(outputs.subject),
    cta: {
      type: "redirect",
      data: {
        ...(typeof redirect?.url === "string" ? { url: redirect.url } : {}),
        ...(typeof redirect?.target === "string" ? { target: redirect.target } : {}),
      },
      ...(buttons.length > 0 ? { action: { buttons } } : {}),
    },
    data: isObject(outputs.data) ? outputs.data : {},
    avatar: text(outputs.avatar),
    // A step defined in code names no feed.
    feedId: "",
  });
  return writeInApp({ job, subscriber, onMessage }, message, {
    created: "In-app message created from the bridge's content",
  });
}

/**
 * Steps defined in code. A channel step asks the step's filters and the subscriber's preferences
 * first, as a stored one does; the others run in the app, whose own `skip` decides.
 */
export const codeChannelStep: StepHandler = {
  gated: true,
  claims: true,
  run: (s: StepRun) => runCodeStep(s.deps, s.job, s.notification, s.subscriber, s.onMessage),
};
export const codeStep: StepHandler = { ...codeChannelStep, gated: false };
