import { useEffect, useRef, useState } from "preact/hooks";
import { api, ok } from "../../api.ts";
import type { Workflow } from "../../types.ts";
import { Text } from "./fields.tsx";
import { isChannel, type JsonObject, typeLabel } from "./model.ts";
import { parsePayload, StepPreview } from "./preview.tsx";

const OUTCOMES: Record<string, string> = {
  processed: "Sent",
  trigger_not_active: "Recorded but not run: the workflow is inactive (switch it on to send)",
  no_workflow_steps_defined: "Not run: the workflow has no steps",
  no_workflow_active_steps_defined: "Not run: none of the workflow's steps is active",
  no_tenant_found: "Not run: no such tenant",
};

const SUBSCRIBER_KEY = "tidings.testSubscriber";
/** What a template reads of the subscriber (src/workflows/templates.ts, SYSTEM_VARIABLES). */
const SUBSCRIBER_FIELDS = [
  "subscriberId",
  "firstName",
  "lastName",
  "email",
  "phone",
  "avatar",
  "locale",
  "data",
] as const;

/**
 * "Send test": triggers the workflow as saved for one subscriber with a payload (prefilled from the
 * workflow's variables), links to the notification it made in Activity, and previews each of its
 * channel steps with that payload.
 */
export function TestSend({
  workflow,
  payloadText,
  onPayloadText,
  onClose,
  unsaved,
}: {
  workflow: Workflow;
  /** The page has changes not saved yet (the test sends the workflow as saved). */
  unsaved: boolean;
  payloadText: string;
  onPayloadText: (text: string) => void;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [subscriberId, setSubscriberId] = useState(() => sessionStorage.getItem(SUBSCRIBER_KEY) ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<{ text: string; notificationId?: string } | null>(null);

  useEffect(() => {
    dialog.current?.showModal();
    return () => dialog.current?.close();
  }, []);

  // The previews render for the subscriber named, once it is found (a search, so an id that names
  // no one yet is no error): its name, email and the rest, as a send would.
  const [subscriber, setSubscriber] = useState<JsonObject | undefined>(undefined);
  useEffect(() => {
    const wanted = subscriberId.trim();
    if (wanted === "") {
      setSubscriber(undefined);
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      ok(api.GET("/v1/subscribers", { params: { query: { search: wanted, limit: 20 } } })).then(
        ({ data }) => {
          if (!current) return;
          const found = data.find((s) => s.subscriberId === wanted);
          setSubscriber(
            found
              ? Object.fromEntries(
                  SUBSCRIBER_FIELDS.flatMap((field) =>
                    found[field] === undefined || found[field] === null ? [] : [[field, found[field]]],
                  ),
                )
              : undefined,
          );
        },
        () => current && setSubscriber(undefined),
      );
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [subscriberId]);

  async function send(event: Event) {
    event.preventDefault();
    setError(null);
    setResult(null);
    const parsed = parsePayload(payloadText);
    if ("problem" in parsed) {
      setError(parsed.problem);
      return;
    }
    const to = subscriberId.trim();
    setBusy(true);
    try {
      sessionStorage.setItem(SUBSCRIBER_KEY, to);
      const { data } = await ok(
        api.POST("/v1/events/trigger", {
          body: { name: workflow.triggers[0]?.identifier ?? workflow._id, to, payload: parsed.payload },
        }),
      );
      const made = await ok(
        api.GET("/v1/notifications", { params: { query: { transactionId: data.transactionId } } }),
      );
      const notificationId = made.data[0]?._id;
      setResult({
        text: `${OUTCOMES[data.status] ?? data.status}. Transaction ${data.transactionId}.`,
        ...(notificationId ? { notificationId } : {}),
      });
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const channelSteps = workflow.steps
    .map((step, i) => ({ step, i }))
    .filter(({ step }) => isChannel(String(step.template.type)));
  return (
    <dialog ref={dialog} class="test-send" aria-labelledby="test-send-title" onClose={onClose}>
      <div class="title-row">
        <h2 id="test-send-title">Send a test of {workflow.name}</h2>
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      {unsaved && (
        <p class="hint">The test sends the workflow as saved: your changes not saved yet are not in it.</p>
      )}
      {!workflow.active && (
        <p class="hint">The workflow is inactive: a test is recorded in Activity but sends nothing.</p>
      )}
      <div class="test-send-body">
        <form onSubmit={send}>
          <Text
            id="test-subscriber"
            label="Subscriber ID"
            value={subscriberId}
            required
            hint="Made if it does not exist yet"
            onChange={setSubscriberId}
          />
          <Text
            id="test-payload"
            label="Payload"
            rows={8}
            value={payloadText}
            hint="JSON: the variables the workflow's templates read"
            onChange={onPayloadText}
          />
          <div class="toolbar">
            <button type="submit" class="primary" disabled={busy}>
              Send
            </button>
          </div>
          {error && <p role="alert">{error}</p>}
          <div role="status" aria-live="polite">
            {result && (
              <p>
                {result.text}{" "}
                {result.notificationId && (
                  <a href={`#/activity/${encodeURIComponent(result.notificationId)}`}>
                    Open the notification in Activity
                  </a>
                )}
              </p>
            )}
          </div>
        </form>
        <div class="previews">
          {channelSteps.length === 0 && <p class="hint">No step of this workflow sends a message.</p>}
          {channelSteps.map(({ step, i }) => (
            <StepPreview
              key={step._id}
              workflowId={workflow._id}
              stepId={step._id}
              type={step.template.type as string}
              payloadText={payloadText}
              label={`Preview of step ${i + 1}: ${typeLabel(step.template.type as string)}`}
              subscriber={subscriber}
              code={workflow.origin === "external" ? { controls: undefined } : undefined}
            />
          ))}
        </div>
      </div>
    </dialog>
  );
}
