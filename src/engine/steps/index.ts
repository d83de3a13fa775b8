import {
  type Subscriber,
  type SubscriberPreferences,
  subscriberForTemplates,
} from "../../subscribers/domain.ts";
import {
  decideStep,
  type getSubscriberByRef,
  isChannelStep,
  type loadSubscriberPreferences,
} from "../../subscribers/service.ts";
import { subscriptionPreferenceForStep } from "../../topics/service.ts";
import type { StepType } from "../../workflows/domain.ts";
import type { Job, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { stepPasses } from "../filters.ts";
import { codeChannelStep, codeStep } from "./bridge.ts";
import { chatStep } from "./chat.ts";
import { delayStep } from "./delay.ts";
import { digestStep } from "./digest.ts";
import { emailStep } from "./email.ts";
import type { MessageListener, StepHandler, StepOutcome, StepResult } from "./handler.ts";
import { inAppStep } from "./in-app.ts";
import { throttleStep } from "./throttle.ts";

/** A channel this service has no provider for: recorded as skipped. */
const noProvider: StepHandler = {
  gated: true,
  claims: false,
  run: ({ job }) => ({
    status: "skipped",
    executionStatus: "Warning",
    detail: `No active ${job.type} integration in this environment`,
  }),
};

/** The handler of each step type of a stored workflow. */
const HANDLERS: Partial<Record<StepType, StepHandler>> = {
  in_app: inAppStep,
  email: emailStep,
  chat: chatStep,
  sms: noProvider,
  push: noProvider,
  delay: delayStep,
  digest: digestStep,
  throttle: throttleStep,
};

/** A step type with no handler (a custom step of a stored workflow): it delivers nothing. */
const nothing: StepHandler = {
  gated: true,
  claims: false,
  run: ({ job }) => ({
    status: "skipped",
    executionStatus: "Success",
    detail: `A ${job.type} step delivers nothing`,
  }),
};

/** The handler that runs a job's step: its app's bridge for a step defined in code, else its type's. */
export function handlerFor(job: Job): StepHandler {
  if (job.step.code) return isChannelStep(job.type) ? codeChannelStep : codeStep;
  return HANDLERS[job.type] ?? nothing;
}

/** Whether a job's step reads the subscriber's preferences (a gated step that is active). */
export const readsPreferences = (job: Job): boolean => job.step.active && handlerFor(job).gated;

/** The job's subscriber and its preferences, as read when the job started (run-job.ts reads them at once). */
export type Loading = Promise<
  [
    Awaited<ReturnType<typeof getSubscriberByRef>>,
    Awaited<ReturnType<typeof loadSubscriberPreferences>> | undefined,
  ]
>;

/**
 * A gated step's filters, then the subscriber's preferences (and a topic subscription's): the
 * outcome of a step they keep from running, or undefined when it runs.
 */
export function gate(
  deps: Pick<EngineDeps, "clock">,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  preferences: SubscriberPreferences | undefined,
  subscription?: Awaited<ReturnType<typeof subscriptionPreferenceForStep>>,
): StepOutcome | undefined {
  const filter = stepPasses(job.step.filters, {
    payload: notification.payload,
    subscriber: subscriberForTemplates(subscriber),
    tenant: notification.tenant,
    now: deps.clock.now(),
  });
  if (!filter.passed) return { status: "skipped", executionStatus: "Success", detail: "filtered" };
  const decision = decideStep(job.type, {
    critical: notification.workflow.critical,
    preferenceSettings: notification.workflow.preferenceSettings,
    ...preferences,
    now: deps.clock.now(),
    timezone: subscriber.timezone,
    subscription,
  });
  if (!decision.run)
    return { status: "skipped", executionStatus: "Success", detail: `Skipped: ${decision.reason}` };
  return undefined;
}

/**
 * Decides a job's step and runs it: an inactive step, or one whose subscriber is gone, is skipped;
 * a gated step asks the step's filters and the subscriber's preferences (and a topic
 * subscription's) first; then the step's handler runs.
 */
export async function runStep(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  loading: Loading,
  onMessage: MessageListener | undefined,
): Promise<StepResult> {
  const { step } = job;
  if (!step.active) return { status: "skipped", executionStatus: "Success", detail: "The step is inactive" };
  const [subscriber, preferences] = await loading;
  if (!subscriber)
    return { status: "skipped", executionStatus: "Warning", detail: "The subscriber no longer exists" };
  const handler = handlerFor(job);
  const run = { deps, job, notification, subscriber, onMessage };
  if (!handler.gated) return handler.run(run);

  // A notification that came through a topic: that subscription's preference for the workflow too.
  const subscription =
    notification.topicId !== "" && isChannelStep(job.type)
      ? await subscriptionPreferenceForStep(
          deps,
          notification.topicId,
          job.subscriberRef,
          job.workflowId,
          notification.payload,
        )
      : undefined;
  const refused = gate(deps, job, notification, subscriber, preferences, subscription);
  if (refused) return refused;
  return handler.run(run);
}
