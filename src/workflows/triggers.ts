import slugify from "slugify";
import type { Step, Trigger } from "./domain.ts";
import { templateStrings, templateVariables } from "./templates.ts";

/** The trigger identifier Novu derives from a name: lower case, letters, digits and single hyphens. */
export function slugifyName(name: string): string {
  return slugify(name, { lower: true, strict: true, trim: true }).slice(0, 80).replace(/-+$/, "");
}

const SUBSCRIBER_FIELDS: Record<string, string> = { email: "email", sms: "phone" };

/**
 * Payload variables: what the step templates read from the payload, in order of first use, found
 * by parsing each template string (src/workflows/templates.ts), so blocks, helpers and comments
 * are read as Handlebars reads them.
 */
export function payloadVariables(steps: readonly Step[]): string[] {
  const names = new Set<string>();
  for (const step of steps) {
    for (const [, text] of templateStrings(step.template, "template")) {
      for (const name of templateVariables(text)) names.add(name);
    }
  }
  return [...names];
}

/** The subscriber fields the workflow's channels need: email for email steps, phone for sms. */
export function subscriberVariables(steps: readonly Step[]): string[] {
  const names = new Set<string>();
  for (const step of steps) {
    const field = SUBSCRIBER_FIELDS[String(step.template.type)];
    if (field) names.add(field);
  }
  return [...names];
}

export function buildTriggers(identifier: string, steps: readonly Step[]): Trigger[] {
  return [
    {
      type: "event",
      identifier,
      variables: payloadVariables(steps).map((name) => ({ name })),
      subscriberVariables: subscriberVariables(steps).map((name) => ({ name })),
    },
  ];
}
