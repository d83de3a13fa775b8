import { isoNow } from "../../clock.ts";
import { pipelined } from "../../store/pipeline.ts";
import { subscriberForTemplates } from "../../subscribers/domain.ts";
import { holdSubscriber } from "../../subscribers/service.ts";
import type { ExecutionStatus, Job, Message } from "../domain.ts";
import { engineOnConnection } from "../engine-deps.ts";
import { assembleInApp, inAppTemplateFields } from "../in-app-template.ts";
import { deleteMessage, insertMessage } from "../message-repository.ts";
import { newMessage } from "../records.ts";
import { templateData } from "../render.ts";
import { defaultRenderer, fieldsToRender, renderLimitDetail, type StepRendering } from "../renderer.ts";
import { digestedEvents } from "./digest.ts";
import { type Deferred, type StepHandler, type StepResult, type StepRun, tenantOf } from "./handler.ts";

/** The feed an in-app step names (`_feedId`, or `feedId` as written), as Novu's message records it. */
function feedOf(template: Job["step"]["template"]): string {
  const named = typeof template._feedId === "string" ? template._feedId : template.feedId;
  return typeof named === "string" ? named : "";
}

/** What an in-app step's templates see. */
function dataOf(step: Pick<StepRun, "notification" | "subscriber">, events?: Record<string, unknown>[]) {
  const { notification, subscriber } = step;
  return templateData({
    payload: notification.payload,
    subscriber: subscriberForTemplates(subscriber),
    tenant: notification.tenant,
    actor: notification.actor,
    events,
  });
}

/** The step's message from its rendered fields. */
function messageOf(step: Pick<StepRun, "deps" | "job" | "notification" | "subscriber">, rendering: Rendered) {
  const { deps, job, notification, subscriber } = step;
  const template = job.step.template;
  const rendered = assembleInApp(template, rendering.fields, rendering.problems);
  const message = newMessage(job, notification, subscriber, isoNow(deps.clock), {
    channel: "in_app",
    content: rendered.content,
    subject: rendered.subject,
    cta: rendered.cta,
    data: rendered.data,
    avatar: rendered.avatar,
    feedId: feedOf(template),
  });
  return { message, problems: rendered.problems };
}

type Rendered = Extract<StepRendering, { ok: true }>;

/** The in-app step of a stored workflow: its templates rendered, the message written with the outcome. */
export const inAppStep: StepHandler = {
  gated: true,
  claims: false,
  async run(step: StepRun): Promise<StepResult> {
    const { deps, job, notification } = step;
    const rendering = await (deps.renderer ?? defaultRenderer()).render(
      fieldsToRender("in_app", inAppTemplateFields(job.step.template)),
      dataOf(step, await digestedEvents(deps, job, notification)),
    );
    if (!rendering.ok) {
      return { status: "failed", executionStatus: "Failed", detail: renderLimitDetail(job.type, rendering) };
    }
    const { message, problems } = messageOf(step, rendering);
    return writeInApp(step, message, { created: IN_APP_CREATED, problems });
  },
};

export const IN_APP_CREATED = "In-app message created";

/**
 * The message of an in-app step that runs first in its run (nothing before it to wait for, so no
 * digested events), rendered on the event loop alone: what a trigger delivers in its own
 * transaction. Undefined when a template needs more (a render thread, or a limit), and the step
 * goes to the queue as any other.
 */
export function inAppAtOnce(
  step: Pick<StepRun, "deps" | "job" | "notification" | "subscriber">,
):
  | { message: Message; status: ExecutionStatus; detail: string; raw: string; problems: string[] }
  | undefined {
  const { deps, job } = step;
  const rendering = (deps.renderer ?? defaultRenderer()).renderInline(
    fieldsToRender("in_app", inAppTemplateFields(job.step.template)),
    dataOf(step),
  );
  if (!rendering?.ok) return undefined;
  const { message, problems } = messageOf(step, rendering);
  return {
    message,
    status: problems.length > 0 ? "Warning" : "Success",
    detail: IN_APP_CREATED,
    raw: problems.join("; "),
    problems,
  };
}

/**
 * An in-app message, written in the transaction that records the job's outcome (run-job.ts `finish`):
 * one commit a message, and a job settled meanwhile (a cancel won) rolls its message back with it.
 * Written while the subscriber's row is held: a delete of the subscriber either waits for this
 * message and removes it with the rest, or has happened and nothing is kept. The hold and the
 * message go out together (one round trip on PostgreSQL, where the insert runs once the hold has its
 * lock); a message written for a subscriber found gone is taken back in the same transaction. Once
 * committed, the step's listener hears of a message that is new.
 */
export function writeInApp(
  step: Pick<StepRun, "job" | "subscriber" | "onMessage">,
  message: Message,
  says: { created: string; problems?: string[] },
): Deferred {
  const { job, subscriber, onMessage } = step;
  const problems = says.problems ?? [];
  let created: Message | undefined;
  return {
    inTransaction: async (trxDeps) => {
      created = undefined;
      const [held, written] = await pipelined(trxDeps.db, [
        (db) => holdSubscriber(engineOnConnection(trxDeps, db), tenantOf(job), job.subscriberRef),
        (db) => insertMessage(db, message),
      ]);
      if (!held) {
        if (written.created) await deleteMessage(trxDeps.db, written.message.id);
        return { status: "skipped", executionStatus: "Warning", detail: "The subscriber no longer exists" };
      }
      if (written.created) created = written.message;
      return {
        status: "completed",
        executionStatus: problems.length > 0 ? "Warning" : "Success",
        detail: written.created ? says.created : "In-app message was already created",
        raw: problems.join("; "),
      };
    },
    afterCommit: () => {
      if (created !== undefined)
        onMessage?.({
          environmentId: job.environmentId,
          subscriberRef: job.subscriberRef,
          messageId: created.id,
          written: { message: created, subscriber },
        });
    },
  };
}
