import type { Subscriber } from "../../subscribers/domain.ts";
import { openChannelCredentials } from "../../subscribers/service.ts";
import type { ChatSender } from "../channel-senders.ts";
import type { Job, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { jobMessages } from "../message-repository.ts";
import { defaultRenderer, fieldsToRender } from "../renderer.ts";
import {
  DeliveryError,
  type DeliveryOutcome,
  dataFor,
  describe,
  overBudget,
  record,
  skipped,
} from "./channel.ts";
import type { StepHandler } from "./handler.ts";

/** The chat step of a stored workflow. */
export const chatStep: StepHandler = {
  gated: true,
  claims: true,
  run: ({ deps, job, notification, subscriber }) => deliverChat(deps, job, notification, subscriber),
};

/**
 * A chat step: the rendered text goes to the subscriber's webhook of each active chat integration's
 * provider (the one its channel names, when it names one). Each delivery is recorded as it
 * succeeds, so a retry sends only what has not gone yet.
 */
export async function deliverChat(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  /** Text rendered elsewhere (a step defined in code: its bridge), asked for once there is a webhook. */
  given?: () => Promise<{ text: string } | DeliveryOutcome>,
): Promise<DeliveryOutcome> {
  const senders = (await deps.senders?.chat(job.environmentId)) ?? [];
  if (senders.length === 0) return skipped("No active chat integration in this environment");
  const targets: { sender: ChatSender; webhookUrl: string }[] = [];
  const unopened: string[] = [];
  for (const channel of subscriber.channels) {
    // Masked, but empty when there is no webhook.
    if (channel.credentials.webhookUrl === "") continue;
    const sender = senders.find(
      (s) =>
        s.providerId === channel.providerId &&
        (channel.integrationIdentifier === "" || s.identifier === channel.integrationIdentifier),
    );
    if (!sender) continue;
    const webhookUrl = openChannelCredentials(deps, subscriber, channel)?.webhookUrl ?? "";
    if (webhookUrl === "") unopened.push(channel.providerId);
    else targets.push({ sender, webhookUrl });
  }
  if (targets.length === 0) {
    if (unopened.length > 0)
      return skipped(
        `The subscriber's webhook for ${unopened.join(", ")} cannot be opened with this service's ` +
          "TIDINGS_SECRET_KEY (sealed with another key?): set it again",
      );
    const providers = [...new Set(senders.map((s) => s.providerId))].join(", ");
    return skipped(`The subscriber has no webhook for the active chat integrations (${providers})`);
  }

  const sent = new Set((await jobMessages(deps.db, job.id)).map((m) => m.providerId));
  if (targets.every(({ sender }) => sent.has(sender.providerId)))
    return { status: "completed", executionStatus: "Success", detail: "The chat message was already sent" };
  let text: string;
  let problems: string[] = [];
  if (given) {
    const content = await given();
    if ("status" in content) return content;
    text = content.text;
  } else {
    const rendering = await (deps.renderer ?? defaultRenderer()).render(
      fieldsToRender(job.type, { content: job.step.template.content }),
      await dataFor(deps, job, notification, subscriber),
    );
    if (!rendering.ok) return overBudget(job, rendering);
    text = rendering.fields.get("content")?.text ?? "";
    problems = rendering.problems;
  }
  const delivered: string[] = [];
  const deliveredThrough: string[] = [];
  const retryable: string[] = [];
  const refusedForGood: string[] = [];
  for (const { sender, webhookUrl } of targets) {
    if (sent.has(sender.providerId)) continue;
    const result = await sender.send(webhookUrl, text);
    if (result.ok) {
      await record(deps, job, notification, subscriber, {
        channel: "chat",
        content: text,
        subject: "",
        providerId: sender.providerId,
        providerMessageId: result.messageId,
      });
      delivered.push(`${describe(sender)}: ${result.response}`);
      deliveredThrough.push(sender.providerId);
    } else {
      (result.retryable ? retryable : refusedForGood).push(`${describe(sender)}: ${result.error}`);
    }
  }
  if (retryable.length > 0) throw new DeliveryError([...retryable, ...refusedForGood].join("; "));
  if (refusedForGood.length > 0 && delivered.length === 0 && sent.size === 0) {
    return {
      status: "failed",
      executionStatus: "Failed",
      detail: "The chat provider refused the message; it is not retried",
      raw: refusedForGood.join("; "),
    };
  }
  const warn = refusedForGood.length > 0 || problems.length > 0;
  return {
    status: "completed",
    executionStatus: warn ? "Warning" : "Success",
    detail:
      deliveredThrough.length === 0
        ? "The chat message was already sent"
        : `Chat message sent through ${deliveredThrough.join(", ")}`,
    raw: [...delivered, ...refusedForGood, ...problems].join("; "),
  };
}
