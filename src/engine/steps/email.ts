import { layoutFrameForStep } from "../../layouts/service.ts";
import type { Subscriber } from "../../subscribers/domain.ts";
import { brandingForTemplates } from "../../tenancy/service.ts";
import type { Job, Notification } from "../domain.ts";
import type { EngineDeps } from "../engine-deps.ts";
import { jobMessages } from "../message-repository.ts";
import { escapeModeFor } from "../render.ts";
import { defaultRenderer, fieldsToRender, type StepRendering } from "../renderer.ts";
import {
  type DeliveryOutcome,
  dataFor,
  describe,
  overBudget,
  record,
  refused,
  skipped,
  type TemplateData,
} from "./channel.ts";
import type { StepHandler } from "./handler.ts";

/** The email step of a stored workflow. */
export const emailStep: StepHandler = {
  gated: true,
  claims: true,
  run: ({ deps, job, notification, subscriber }) => deliverEmail(deps, job, notification, subscriber),
};

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
