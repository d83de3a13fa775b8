import { isoNow } from "../../clock.ts";
import { type Subscriber, subscriberForTemplates } from "../../subscribers/domain.ts";
import type { DeliveryResult, Sender } from "../channel-senders.ts";
import type { ExecutionStatus, Job, Message, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { insertMessage } from "../message-repository.ts";
import { newMessage } from "../records.ts";
import { templateData } from "../render.ts";
import { renderLimitDetail, type StepRendering } from "../renderer.ts";
import { digestedEvents } from "./digest.ts";

/** What the channel steps that send through a provider (email, chat) share. */

/** What a delivery step decided; the same shape as run-job's outcomes. */
export interface DeliveryOutcome {
  status: "completed" | "skipped" | "failed";
  executionStatus: ExecutionStatus;
  detail: string;
  raw?: string;
  /** For `failed`: the rest of the run is canceled whatever `shouldStopOnFail` says. */
  stopsRun?: boolean;
}

/**
 * A failure worth retrying: thrown out of the step, so run-job records it (status Failed, with this
 * message as its raw answer) and the queue runs the job again with backoff; after the last attempt
 * the job is `failed` (jobGivenUp).
 */
export class DeliveryError extends Error {
  override name = "DeliveryError";
}

export const skipped = (detail: string): DeliveryOutcome => ({
  status: "skipped",
  executionStatus: "Warning",
  detail,
});

export type TemplateData = Record<string, unknown>;

/** What a step's templates see: as an in-app step's, with the digested events when a digest ran before. */
export async function dataFor(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
): Promise<TemplateData> {
  return templateData({
    payload: notification.payload,
    subscriber: subscriberForTemplates(subscriber),
    tenant: notification.tenant,
    actor: notification.actor,
    events: await digestedEvents(deps, job, notification),
  });
}

/** A step whose template ran into a render limit fails, and sends nothing. */
export const overBudget = (job: Job, failure: Extract<StepRendering, { ok: false }>): DeliveryOutcome => ({
  status: "failed",
  executionStatus: "Failed",
  detail: renderLimitDetail(job.type, failure),
});

export async function record(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  fields: Pick<Message, "channel" | "content" | "subject" | "providerId" | "providerMessageId">,
): Promise<void> {
  await insertMessage(deps.db, newMessage(job, notification, subscriber, isoNow(deps.clock), fields));
}

export const describe = (sender: Sender) => `${sender.providerId} (integration ${sender.identifier})`;

/** The provider said no: retried later when it may say yes, otherwise the step fails now. */
export function refused(sender: Sender, result: Extract<DeliveryResult, { ok: false }>): DeliveryOutcome {
  const answer = `${describe(sender)}: ${result.error}${result.response ? ` (${result.response})` : ""}`;
  if (result.retryable) throw new DeliveryError(answer);
  return {
    status: "failed",
    executionStatus: "Failed",
    detail: `The ${sender.providerId} provider refused the message; it is not retried`,
    raw: answer,
  };
}
