import { useState } from "preact/hooks";
import { api, ok } from "../../api.ts";
import { Problem } from "../../common.tsx";
import type { Workflow } from "../../types.ts";

/** The switch of one workflow: its state is the API's, set through PUT /v1/workflows/:id/status. */
export function ActiveSwitch({
  workflow,
  onChanged,
}: {
  workflow: Workflow;
  onChanged: (w: Workflow) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function toggle() {
    setBusy(true);
    setError(null);
    try {
      const { data } = await ok(
        api.PUT("/v1/workflows/{workflowId}/status", {
          params: { path: { workflowId: workflow._id } },
          body: { active: !workflow.active },
        }),
      );
      onChanged(data);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button
        type="button"
        role="switch"
        class="switch"
        aria-checked={workflow.active}
        aria-label={`Active: ${workflow.name}`}
        disabled={busy}
        onClick={toggle}
      >
        <span aria-hidden="true">{workflow.active ? "On" : "Off"}</span>
      </button>
      <Problem message={error} />
    </>
  );
}
