import { useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { Pager, Problem, useLoad, when } from "../common.tsx";
import type { Workflow } from "../types.ts";
import { PublishToProduction } from "./publish.tsx";
import { ActiveSwitch } from "./workflow/active-switch.tsx";
import { typeLabel } from "./workflow/model.ts";

export { WorkflowEditor } from "./workflow/editor.tsx";

const PAGE_SIZE = 10;

export function Workflows() {
  const [page, setPage] = useState(0);
  const [query, setQuery] = useState("");
  const { data, error, reload, setError } = useLoad(
    () =>
      ok(
        api.GET("/v1/workflows", {
          params: { query: { page, limit: PAGE_SIZE, query: query || undefined } },
        }),
      ),
    [page, query],
  );
  const [rows, setRows] = useState<Record<string, Workflow>>({});

  async function remove(workflow: Workflow) {
    if (!confirm(`Delete the workflow “${workflow.name}”?`)) return;
    try {
      await ok(api.DELETE("/v1/workflows/{workflowId}", { params: { path: { workflowId: workflow._id } } }));
      await reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  const list = (data?.data ?? []).map((w) => rows[w._id] ?? w);
  return (
    <section aria-labelledby="workflows-title">
      <div class="title-row">
        <h1 id="workflows-title">Workflows</h1>
        <button type="button" onClick={() => (location.hash = "#/workflows/new")}>
          New workflow
        </button>
      </div>
      <search class="search-row">
        <label for="workflow-search">Search workflows</label>
        <input
          id="workflow-search"
          type="search"
          value={query}
          onInput={(event) => {
            setQuery(event.currentTarget.value);
            setPage(0);
          }}
        />
      </search>
      <Problem message={error} />
      <div class="table-scroll">
        <table class="workflow-list">
          <caption class="visually-hidden">Workflows, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Trigger identifier</th>
              <th scope="col">Group</th>
              <th scope="col">Steps</th>
              <th scope="col">Last updated</th>
              <th scope="col">Active</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((workflow) => (
              <tr key={workflow._id}>
                <td>
                  <a href={`#/workflows/${encodeURIComponent(workflow._id)}`}>{workflow.name}</a>
                  {workflow.origin === "external" && <span class="tag">Defined in code</span>}
                </td>
                <td>
                  <code>{workflow.triggers[0]?.identifier}</code>
                </td>
                <td>{workflow.notificationGroup?.name}</td>
                <td>{workflow.steps.map((s) => typeLabel(String(s.template.type))).join(" → ") || "none"}</td>
                <td>
                  <time dateTime={workflow.updatedAt}>{when(workflow.updatedAt)}</time>
                </td>
                <td>
                  <ActiveSwitch workflow={workflow} onChanged={(w) => setRows({ ...rows, [w._id]: w })} />
                </td>
                <td>
                  <button
                    type="button"
                    onClick={() => remove(workflow)}
                    aria-label={`Delete ${workflow.name}`}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data && data.data.length === 0 && <p>No workflows{query ? " match" : " yet"}.</p>}
      {data && (
        <Pager
          label="Workflow"
          page={page}
          hasMore={(page + 1) * PAGE_SIZE < data.totalCount}
          onPage={setPage}
        />
      )}
      <PublishToProduction onPublished={reload} />
    </section>
  );
}
