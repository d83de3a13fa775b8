import { isoNow } from "../clock.ts";
import { newObjectId } from "../ids.ts";
import { layoutFrameForStep } from "../layouts/service.ts";
import { type Subscriber, subscriberForTemplates } from "../subscribers/domain.ts";
import { openChannelCredentials } from "../subscribers/service.ts";
import { brandingForTemplates } from "../tenancy/service.ts";
import type { EngineDeps } from "./accept.ts";
import type { ChatSender, DeliveryResult, Sender } from "./channel-senders.ts";
import { digestedEvents } from "./digest.ts";
import {
  type ExecutionStatus,
  freshInboxState,
  type Job,
  type Message,
  type Notification,
} from "./domain.ts";
import { insertMessage, jobMessages } from "./message-repository.ts";
import { escapeModeFor, templateData } from "./render.ts";
import { defaultRenderer, fieldsToRender, renderLimitDetail, type StepRendering } from "./renderer.ts";

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

const skipped = (detail: string): DeliveryOutcome => ({
  status: "skipped",
  executionStatus: "Warning",
  detail,
});

type TemplateData = Record<string, unknown>;

/** What a step's templates see: as an in-app step's, with the digested events when a digest ran before. */
async function dataFor(
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

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * An email's template fields: its `content` as a string, or the blocks of Novu's email editor
 * (`text` and `button` blocks, each with its `content`, a button with its `url`).
 */
export function emailFields(template: Job["step"]["template"]): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    subject: template.subject,
    senderName: template.senderName,
    preheader: template.preheader,
  };
  const content = template.content;
  if (!Array.isArray(content)) fields.content = content;
  else {
    for (const [i, block] of content.entries()) {
      const { type, content: text, url } = (block ?? {}) as Record<string, unknown>;
      fields[`content[${i}].content`] = text;
      if (type === "button") fields[`content[${i}].url`] = url;
    }
  }
  return fields;
}

/** An email's HTML from its rendered fields: the content, or the editor's blocks as paragraphs and links. */
export function emailHtml(content: unknown, rendered: (field: string) => string): string {
  if (!Array.isArray(content)) return rendered("content");
  return content
    .map((block: unknown, i) => {
      const { type } = (block ?? {}) as Record<string, unknown>;
      const inner = rendered(`content[${i}].content`);
      if (type === "button") {
        const href = escapeAttribute(rendered(`content[${i}].url`));
        return `<p><a href="${href}">${inner}</a></p>`;
      }
      return `<p>${inner}</p>`;
    })
    .join("\n");
}

/**
 * Layouts: the email's HTML placed in its step's layout (the one it names, else the environment's
 * default) where the layout says `{{{body}}}`, the layout's variable defaults under the step's
 * data, which carries the rendered `subject` and `preheader` (HTML, as the body: `{{{preheader}}}`);
 * the HTML as it is when there is no layout. Rendered within the same limits as the step.
 */
async function inLayout(
  deps: EngineDeps,
  job: Job,
  body: string,
  data: TemplateData,
): Promise<{ ok: true; html: string; problems: string[] } | Extract<StepRendering, { ok: false }>> {
  const frame = await layoutFrameForStep(deps, job.environmentId, job.step.template);
  if (!frame) return { ok: true, html: body, problems: [] };
  const rendering = await (deps.renderer ?? defaultRenderer()).render(
    [{ field: "layout", source: frame.content, escape: escapeModeFor("email", "content") }],
    { ...frame.defaults, ...data, body },
  );
  if (!rendering.ok) return rendering;
  return { ok: true, html: rendering.fields.get("layout")?.text ?? "", problems: rendering.problems };
}

/** A step whose template ran into a render limit fails, and sends nothing. */
const overBudget = (job: Job, failure: Extract<StepRendering, { ok: false }>): DeliveryOutcome => ({
  status: "failed",
  executionStatus: "Failed",
  detail: renderLimitDetail(job.type, failure),
});

/**
 * A new Message of the job's step for its subscriber, as first written: unseen and unread, with the
 * workflow's inbox state; `fields` gives the channel and what the step made of it.
 */
export function newMessage(
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  now: string,
  fields: Pick<Message, "channel"> & Partial<Message>,
): Message {
  return {
    id: newObjectId(),
    organizationId: job.organizationId,
    environmentId: job.environmentId,
    notificationId: job.notificationId,
    jobId: job.id,
    workflowId: job.workflowId,
    templateIdentifier: notification.workflow.identifier,
    subscriberRef: job.subscriberRef,
    subscriberId: subscriber.subscriberId,
    transactionId: job.transactionId,
    content: "",
    subject: "",
    cta: { type: "redirect", data: {} },
    payload: notification.payload,
    providerId: "",
    providerMessageId: "",
    status: "sent",
    seen: false,
    read: false,
    lastSeenDate: null,
    lastReadDate: null,
    ...freshInboxState(notification.workflow, now),
    data: {},
    avatar: "",
    feedId: "",
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

async function record(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  fields: Pick<Message, "channel" | "content" | "subject" | "providerId" | "providerMessageId">,
): Promise<void> {
  await insertMessage(deps.db, newMessage(job, notification, subscriber, isoNow(deps.clock), fields));
}

const describe = (sender: Sender) => `${sender.providerId} (integration ${sender.identifier})`;

/**
 * An email step: renders subject and HTML body, sends them through the environment's email
 * integration to the subscriber's address, and records the Message with the provider's id. Never
 * inside a transaction. A job re-run after its email was recorded sends nothing again.
 */
export async function deliverEmail(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
  /** Content rendered elsewhere (a step defined in code: its bridge), asked for once the email can go. */
  given?: () => Promise<RenderedEmail | DeliveryOutcome>,
): Promise<DeliveryOutcome> {
  const sender = await deps.senders?.email(job.environmentId);
  if (!sender) return skipped("No active email integration in this environment");
  if (subscriber.email.trim() === "") return skipped("The subscriber has no email address");
  if ((await jobMessages(deps.db, job.id)).length > 0)
    return { status: "completed", executionStatus: "Success", detail: "The email was already sent" };

  const content = given ? await given() : await renderEmail(deps, job, notification, subscriber);
  if ("status" in content) return content;
  const { subject, html, senderName, problems } = content;

  const result = await sender.send({ to: subscriber.email, subject, html, senderName, deliveryKey: job.id });
  if (!result.ok) return refused(sender, result);
  await record(deps, job, notification, subscriber, {
    channel: "email",
    content: html,
    subject,
    providerId: sender.providerId,
    providerMessageId: result.messageId,
  });
  return {
    status: "completed",
    executionStatus: problems.length > 0 ? "Warning" : "Success",
    detail: `Email sent through ${describe(sender)}`,
    raw: [result.response, ...problems].filter(Boolean).join("; "),
  };
}

/** An email ready to send: subject, HTML body, sender name, and what rendering warned of. */
export interface RenderedEmail {
  subject: string;
  html: string;
  senderName: string;
  problems: string[];
}

async function renderEmail(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  subscriber: Subscriber,
): Promise<RenderedEmail | DeliveryOutcome> {
  const template = job.step.template;
  // Emails (their content and their layout) also see the organization's {{branding.*}}.
  const data = {
    ...(await dataFor(deps, job, notification, subscriber)),
    branding: await brandingForTemplates(deps, job.organizationId),
  };
  const rendering = await (deps.renderer ?? defaultRenderer()).render(
    fieldsToRender(job.type, emailFields(template)),
    data,
  );
  if (!rendering.ok) return overBudget(job, rendering);
  const rendered = (field: string) => rendering.fields.get(field)?.text ?? "";
  const problems = [...rendering.problems];
  const subject = rendered("subject");
  const framed = await inLayout(deps, job, emailHtml(template.content, rendered), {
    ...data,
    subject,
    preheader: rendered("preheader"),
  });
  if (!framed.ok) return overBudget(job, framed);
  problems.push(...framed.problems);
  return { subject, html: framed.html, senderName: rendered("senderName"), problems };
}

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

/** The provider said no: retried later when it may say yes, otherwise the step fails now. */
function refused(sender: Sender, result: Extract<DeliveryResult, { ok: false }>): DeliveryOutcome {
  const answer = `${describe(sender)}: ${result.error}${result.response ? ` (${result.response})` : ""}`;
  if (result.retryable) throw new DeliveryError(answer);
  return {
    status: "failed",
    executionStatus: "Failed",
    detail: `The ${sender.providerId} provider refused the message; it is not retried`,
    raw: answer,
  };
}
