import slugify from "slugify";
import type { StepResource, TriggerResource } from "./schemas.ts";

/** The trigger identifier Novu derives from a name: lower case, letters, digits and single hyphens. */
export function slugifyName(name: string): string {
  return slugify(name, { lower: true, strict: true, trim: true }).slice(0, 80).replace(/-+$/, "");
}

const PLACEHOLDER = /\{\{\{?\s*([^{}]*?)\s*\}?\}\}/g;
const PATH = /^[A-Za-z_$][\w$]*(?:\.[\w$]+)*$/;
// Roots the engine fills itself: they are not payload the caller has to send.
const NOT_PAYLOAD = new Set([
  "subscriber",
  "step",
  "tenant",
  "actor",
  "this",
  "branding",
  "else",
  "true",
  "false",
]);
const SUBSCRIBER_FIELDS: Record<string, string> = { email: "email", sms: "phone" };

function collectStrings(value: unknown, out: string[], depth = 0): void {
  if (depth > 32) return;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, out, depth + 1);
  else if (value && typeof value === "object") {
    for (const item of Object.values(value)) collectStrings(item, out, depth + 1);
  }
}

/** Payload variables: the `{{placeholders}}` the step templates use, in order of first use. */
export function payloadVariables(steps: readonly StepResource[]): string[] {
  const strings: string[] = [];
  for (const step of steps) collectStrings(step.template, strings);
  const names = new Set<string>();
  for (const text of strings) {
    for (const match of text.matchAll(PLACEHOLDER)) {
      const expression = match[1] ?? "";
      // Closing tags, comments and partials name no variable.
      if (/^[/!>]/.test(expression)) continue;
      // `{{#each items}}`, `{{#if user.vip}}`, `{{uppercase name}}`: the paths after the helper count.
      const words = expression.replace(/^[#^&]/, "").split(/\s+/);
      const candidates = words.length > 1 ? words.slice(1) : words;
      for (const word of candidates) {
        if (!PATH.test(word)) continue;
        const root = word.split(".")[0] ?? "";
        if (NOT_PAYLOAD.has(root) || root.startsWith("@")) continue;
        names.add(word.startsWith("payload.") ? word.slice("payload.".length) : word);
      }
    }
  }
  return [...names];
}

/** The subscriber fields the workflow's channels need: email for email steps, phone for sms. */
export function subscriberVariables(steps: readonly StepResource[]): string[] {
  const names = new Set<string>();
  for (const step of steps) {
    const field = SUBSCRIBER_FIELDS[String(step.template.type)];
    if (field) names.add(field);
  }
  return [...names];
}

export function buildTriggers(identifier: string, steps: readonly StepResource[]): TriggerResource[] {
  return [
    {
      type: "event",
      identifier,
      variables: payloadVariables(steps).map((name) => ({ name })),
      subscriberVariables: subscriberVariables(steps).map((name) => ({ name })),
    },
  ];
}
