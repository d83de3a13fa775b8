import type { StepTemplate } from "../workflows/domain.ts";
import { assembleInApp, inAppTemplateFields } from "./in-app-template.ts";
import { type TemplateInput, templateData } from "./render.ts";
import { defaultRenderer, fieldsToRender, type Renderer } from "./renderer.ts";
import { emailFields, emailHtml } from "./steps/email.ts";

/** A step rendered for a look before it runs: what it would send, or why it cannot render. */
export type StepPreview = { ok: true; preview: Record<string, unknown> } | { ok: false; reason: string };

/** A link as Novu's preview shows it: `{url, target?}`, or nothing without a url. */
const link = (url?: string, target?: string) =>
  url ? { url, ...(target !== undefined ? { target } : {}) } : undefined;

/**
 * Renders a channel step's template with the data given, as the step would when it runs (the same
 * fields, escapes and render limits), and names the result's parts as Novu's v2 preview does: in-app
 * `subject, body, avatar, primaryAction, secondaryAction, redirect, data`; email `subject, body`;
 * push `subject, body`; sms and chat `body`. Other steps render nothing: undefined.
 */
export async function previewStep(
  template: StepTemplate,
  input: TemplateInput,
  renderer: Renderer = defaultRenderer(),
): Promise<StepPreview | undefined> {
  const type = template.type;
  if (type !== "in_app" && type !== "email" && type !== "push" && type !== "sms" && type !== "chat")
    return undefined;
  const fields: Record<string, unknown> =
    type === "in_app"
      ? inAppTemplateFields(template)
      : type === "email"
        ? emailFields(template)
        : type === "push"
          ? { title: template.title, content: template.content }
          : { content: template.content };
  const rendering = await renderer.render(fieldsToRender(type, fields), templateData(input));
  if (!rendering.ok) {
    const which = rendering.field ? ` (${rendering.field})` : "";
    return { ok: false, reason: `The step's template${which} ${rendering.exceeded.reason}` };
  }
  const text = (field: string) => rendering.fields.get(field)?.text ?? "";
  const present = (entries: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined && v !== ""));
  switch (type) {
    case "in_app": {
      const message = assembleInApp(template, rendering.fields, rendering.problems);
      const button = (kind: "primary" | "secondary") => {
        const found = message.cta.action?.buttons?.find((b) => b.type === kind);
        return found
          ? { label: found.content, ...present({ redirect: link(found.url, found.target) }) }
          : undefined;
      };
      return {
        ok: true,
        preview: present({
          subject: message.subject,
          body: message.content,
          avatar: message.avatar,
          primaryAction: button("primary"),
          secondaryAction: button("secondary"),
          redirect: link(message.cta.data.url, message.cta.data.target),
          data: Object.keys(message.data).length > 0 ? message.data : undefined,
        }),
      };
    }
    case "email":
      return { ok: true, preview: { subject: text("subject"), body: emailHtml(template.content, text) } };
    case "push":
      return { ok: true, preview: present({ subject: text("title"), body: text("content") }) };
    default:
      return { ok: true, preview: { body: text("content") } };
  }
}
