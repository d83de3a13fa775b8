import type { operations } from "./api-schema.ts";

type Ok<Op extends keyof operations> = operations[Op] extends {
  responses: { 200: { content: { "application/json": infer B } } };
}
  ? B
  : operations[Op] extends { responses: { 201: { content: { "application/json": infer B } } } }
    ? B
    : never;
type DataOf<Op extends keyof operations> = Ok<Op> extends { data: infer D } ? D : never;

export type Workflow = DataOf<"getWorkflow">;
export type WorkflowInput = NonNullable<
  operations["createWorkflow"]["requestBody"]
>["content"]["application/json"];
export type StepInput = NonNullable<WorkflowInput["steps"]>[number];
export type Group = DataOf<"listNotificationGroups">[number];
export type Subscriber = DataOf<"getSubscriber">;
export type Notification = DataOf<"listNotifications">[number];
export type Job = Notification["jobs"][number];
export type Integration = DataOf<"listIntegrations">[number];
