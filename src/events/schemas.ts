import { type Static, Type } from "typebox";
import type { Recipient } from "../engine/service.ts";
import { FreeObject } from "../http/schema-helpers.ts";
import { NOT_BLANK_PATTERN, SUBSCRIBER_ID_TEXT_PATTERN } from "../http/validation.ts";
import { CreateSubscriberBody, type CreateSubscriberInput } from "../subscribers/schemas.ts";
import { TriggerTenant } from "../tenants/schemas.ts";

export const TRIGGER_STATUSES = [
  "processed",
  "trigger_not_active",
  "no_workflow_steps_defined",
  "no_workflow_active_steps_defined",
  "no_tenant_found",
] as const;

export const MAX_RECIPIENTS = 100;
/** The most `payload` and `overrides` may each weigh, as JSON (see documentSizeProblems). */
export const MAX_DOCUMENT_BYTES = 512 * 1024;

// The recipients are JSON Schema's if/then/else rather than unions: Ajv then reports what is wrong
// with the kind of value that was sent (a topic's missing topicKey), not every kind's complaint
// about it. Only the outermost schema says which types are allowed, so a number is told once.

const SubscriberId = {
  type: "string",
  pattern: SUBSCRIBER_ID_TEXT_PATTERN,
  description: "Your id for the subscriber: 1–128 characters, no control characters",
};

// A subscriber named by object is upserted with its profile, so its fields have the create route's
// types; other members are ignored, as Novu's own API does.
const SubscriberObject = {
  required: ["subscriberId"],
  properties: { ...CreateSubscriberBody.properties, subscriberId: SubscriberId },
};

const TopicObject = {
  required: ["topicKey"],
  properties: { type: { const: "Topic" }, topicKey: { type: "string", minLength: 1 } },
};

const isTopic = { required: ["type"], properties: { type: { const: "Topic" } } };

/** JSON Schema's if/then/else. */
function ifThenElse(condition: object, then: object, otherwise: object) {
  return { if: condition, then, else: otherwise };
}

const subscriberRecipient = (description: string) =>
  Type.Unsafe<string | CreateSubscriberInput>({
    type: ["string", "object"],
    additionalProperties: true,
    description,
    ...ifThenElse({ type: "string" }, SubscriberId, SubscriberObject),
  });

const recipient = ifThenElse(
  { type: "string" },
  SubscriberId,
  ifThenElse(isTopic, TopicObject, SubscriberObject),
);

const Recipients = Type.Unsafe<Recipient | Recipient[]>({
  type: ["string", "object", "array"],
  additionalProperties: true,
  description:
    'A subscriberId, a subscriber object ({subscriberId, email?, firstName?, ...}, upserted), a topic ({type: "Topic", ' +
    `topicKey}), or an array of 1 to ${MAX_RECIPIENTS} of these`,
  ...ifThenElse(
    { type: "array" },
    { minItems: 1, maxItems: MAX_RECIPIENTS, items: { type: ["string", "object"], ...recipient } },
    recipient,
  ),
});

const document = (description: string) =>
  Type.Optional(FreeObject(`${description} (at most ${MAX_DOCUMENT_BYTES / 1024} KiB as JSON)`));

// Lengths count characters (code points), as every other text rule of the API does: a name of 200
// emoji is 200 characters, not 400.
const triggerFields = {
  name: Type.String({
    pattern: NOT_BLANK_PATTERN,
    maxLength: 200,
    description: "The workflow's trigger identifier",
  }),
  payload: document("Variables for the templates"),
  overrides: document("Per-trigger overrides, such as `delay: {amount, unit}`"),
  transactionId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: "Unique per environment; generated when absent",
    }),
  ),
  actor: Type.Optional(subscriberRecipient("A subscriberId or subscriber object: who caused it")),
  tenant: Type.Optional(TriggerTenant),
};

/**
 * A trigger, the only check of one: the route validates a single trigger with it, and a bulk
 * trigger checks each of its events with it alone (src/events/service.ts).
 */
export const TriggerBody = Type.Object(
  {
    name: triggerFields.name,
    to: Recipients,
    payload: triggerFields.payload,
    overrides: triggerFields.overrides,
    transactionId: triggerFields.transactionId,
    actor: triggerFields.actor,
    tenant: triggerFields.tenant,
  },
  { additionalProperties: false },
);
export type TriggerBodyValue = Static<typeof TriggerBody>;

export const TriggerAck = Type.Object(
  {
    acknowledged: Type.Literal(true),
    status: Type.Unsafe<(typeof TRIGGER_STATUSES)[number]>({ type: "string", enum: [...TRIGGER_STATUSES] }),
    transactionId: Type.String(),
  },
  { additionalProperties: false },
);

export const TriggerResponse = Type.Object(
  { data: TriggerAck },
  { title: "TriggerResponse", additionalProperties: false },
);

export const BulkTriggerBody = Type.Object(
  {
    // Each event is checked on its own (against TriggerBody), so that one bad event refuses only itself.
    events: Type.Array(Type.Unknown({ description: "A trigger body, as POST /v1/events/trigger takes it" }), {
      maxItems: 100,
      description: "Up to 100 trigger bodies; each is accepted or refused on its own",
    }),
  },
  { additionalProperties: false },
);

export const BulkTriggerResponse = Type.Object(
  {
    data: Type.Array(
      Type.Union([
        TriggerAck,
        Type.Object(
          {
            acknowledged: Type.Literal(false),
            status: Type.Literal("error", { description: "Novu's status for a refused event" }),
            error: Type.Array(Type.String()),
          },
          { additionalProperties: false },
        ),
      ]),
    ),
  },
  { title: "BulkTriggerResponse", additionalProperties: false },
);

export const BroadcastBody = Type.Object(
  {
    name: triggerFields.name,
    payload: triggerFields.payload,
    overrides: triggerFields.overrides,
    transactionId: triggerFields.transactionId,
    actor: triggerFields.actor,
    tenant: triggerFields.tenant,
  },
  { additionalProperties: false },
);
export type BroadcastBodyValue = Static<typeof BroadcastBody>;

export const TransactionParams = Type.Object({
  transactionId: Type.String({ minLength: 1, maxLength: 255, description: "The trigger's transactionId" }),
});

export const CancelResponse = Type.Object(
  { data: Type.Boolean({ description: "True when anything that had not run yet was canceled" }) },
  { title: "CancelTriggerResponse", additionalProperties: false },
);
