import { type Static, Type } from "typebox";
import { FreeObject } from "../http/schema-helpers.ts";

export const TRIGGER_STATUSES = [
  "processed",
  "trigger_not_active",
  "no_workflow_steps_defined",
  "no_workflow_active_steps_defined",
] as const;

const triggerFields = {
  name: Type.String({ maxLength: 200, description: "The workflow's trigger identifier" }),
  // Checked by the service, which names the exact entry and field that is wrong (a union's
  // schema errors would list every branch's complaint).
  to: Type.Unknown({
    description:
      "A subscriberId, a subscriber object ({subscriberId, email?, firstName?, ...}, upserted), a topic " +
      '({type: "Topic", topicKey}), or an array of up to 100 of these',
  }),
  payload: Type.Optional(FreeObject("Variables for the templates (at most 512 KiB)")),
  overrides: Type.Optional(FreeObject("Per-trigger overrides, such as `delay: {amount, unit}`")),
  transactionId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: "Unique per environment; generated when absent",
    }),
  ),
  actor: Type.Optional(Type.Unknown({ description: "A subscriberId or subscriber object: who caused it" })),
  tenant: Type.Optional(
    Type.Unknown({ description: "A tenant identifier or object, for filters and templates" }),
  ),
};

export const TriggerBody = Type.Object(
  { ...triggerFields, to: Type.Optional(triggerFields.to) },
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
    events: Type.Array(Type.Unknown(), {
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
          { acknowledged: Type.Literal(false), error: Type.Array(Type.String()) },
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
