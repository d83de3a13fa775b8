import { useEffect, useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import type { operations } from "../api-schema.ts";
import { Problem } from "../common.tsx";

type Diff = operations["diffEnvironment"]["responses"][200]["content"]["application/json"]["data"];
type Resource = Diff["resources" | "notificationGroups" | "layouts"][number];

const ACTIONS: Record<string, string> = { added: "new", modified: "changed", deleted: "deleted" };

function describe(resource: Resource, kind: string) {
  const name = resource.sourceResource?.name ?? resource.targetResource?.name ?? resource.resourceId;
  const fields = resource.changes[0]?.diffs.new ?? resource.changes[0]?.diffs.previous ?? {};
  const what = resource.action === "modified" ? ` (${Object.keys(fields).join(", ")})` : "";
  return `${kind} “${name}”: ${ACTIONS[resource.action] ?? resource.action}${what}`;
}

/**
 * "Publish to Production" for the environment Production derives from (Development): the diff first,
 * then, once confirmed, the publish of all of it in one transaction. Absent where nothing derives
 * from the key's environment.
 */
export function PublishToProduction({ onPublished }: { onPublished: () => void }) {
  const [target, setTarget] = useState<{ id: string; name: string } | null>(null);
  const [diff, setDiff] = useState<Diff | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  useEffect(() => {
    Promise.all([ok(api.GET("/v1/environments/me")), ok(api.GET("/v1/environments"))]).then(
      ([me, all]) => {
        const children = all.data.filter((e) => e._parentId === me.data._id);
        const child = children.find((e) => e.name === "Production") ?? children[0];
        setTarget(child ? { id: child._id, name: child.name } : null);
      },
      (failure: Error) => setError(failure.message),
    );
  }, []);

  if (!target) return <Problem message={error} />;

  async function review() {
    if (!target) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const { data } = await ok(
        api.POST("/v2/environments/{targetEnvironmentId}/diff", {
          params: { path: { targetEnvironmentId: target.id } },
          body: {},
        }),
      );
      setDiff(data);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  }

  async function publish() {
    if (!target) return;
    setBusy(true);
    setError(null);
    try {
      const { data } = await ok(
        api.POST("/v2/environments/{targetEnvironmentId}/publish", {
          params: { path: { targetEnvironmentId: target.id } },
          body: {},
        }),
      );
      setDiff(null);
      setDone(
        `Published ${data.summary.successful} change${data.summary.successful === 1 ? "" : "s"} to ${target.name}.`,
      );
      onPublished();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const changes = diff
    ? [
        ...diff.notificationGroups.map((r) => describe(r, "Group")),
        ...diff.layouts.map((r) => describe(r, "Layout")),
        ...diff.resources.map((r) => describe(r, "Workflow")),
      ]
    : [];
  return (
    <section aria-labelledby="publish-title" class="publish">
      <h2 id="publish-title">Publish to {target.name}</h2>
      {!diff && (
        <button type="button" onClick={review} disabled={busy}>
          Publish to {target.name}…
        </button>
      )}
      {diff && changes.length === 0 && (
        <p role="status">
          {target.name} is up to date.{" "}
          <button type="button" onClick={() => setDiff(null)}>
            Close
          </button>
        </p>
      )}
      {diff && changes.length > 0 && (
        <>
          <p id="publish-summary">
            These {changes.length} change{changes.length === 1 ? "" : "s"} will be published to {target.name},
            all at once:
          </p>
          <ul aria-labelledby="publish-summary">
            {changes.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
          <button type="button" onClick={publish} disabled={busy}>
            Publish {changes.length} change{changes.length === 1 ? "" : "s"}
          </button>{" "}
          <button type="button" onClick={() => setDiff(null)} disabled={busy}>
            Cancel
          </button>
        </>
      )}
      {done && <p role="status">{done}</p>}
      <Problem message={error} />
    </section>
  );
}
