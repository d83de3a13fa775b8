import { useEffect, useState } from "preact/hooks";
import { api, done, ok } from "../api.ts";
import { Pager, Problem, TableWrap, useLoad, when } from "../common.tsx";

const PAGE_SIZE = 20;
const BODY = "{{{body}}}";
const STARTER = `<div>\n  ${BODY}\n</div>`;
/** What stands in for an email's HTML in the preview. */
const SAMPLE_BODY = "<p>This sample paragraph is where each email's own content goes.</p>";
const layoutHref = (id: string) => `#/layouts/${encodeURIComponent(id)}`;

/** The environment's email layouts, oldest first, the default marked, and a form that makes one. */
export function Layouts() {
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const [identifier, setIdentifier] = useState("");
  const [content, setContent] = useState(STARTER);
  const { data, error, setError } = useLoad(
    () => ok(api.GET("/v1/layouts", { params: { query: { page, pageSize: PAGE_SIZE } } })),
    [page],
  );
  async function create(event: Event) {
    event.preventDefault();
    setError(null);
    try {
      const made = await ok(
        api.POST("/v1/layouts", { body: { name: name.trim(), identifier: identifier.trim(), content } }),
      );
      location.hash = layoutHref(made.data._id);
    } catch (failure) {
      setError(`The layout was not created: ${(failure as Error).message}`);
    }
  }
  const rows = data?.data ?? [];
  return (
    <section aria-labelledby="layouts-title">
      <div class="title-row">
        <h1 id="layouts-title">Layouts</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New layout
          </button>
        )}
      </div>
      <p class="hint">
        An email layout frames the HTML of email steps: its content places it with <code>{BODY}</code>. Email
        steps that name no layout are sent in the default one.
      </p>
      {creating && (
        <form class="stack" onSubmit={create} aria-label="New layout">
          <div class="field">
            <label for="layout-name">Name</label>
            <input
              id="layout-name"
              type="text"
              required
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </div>
          <div class="field">
            <label for="layout-identifier">Identifier</label>
            <input
              id="layout-identifier"
              type="text"
              required
              spellcheck={false}
              value={identifier}
              onInput={(e) => setIdentifier(e.currentTarget.value)}
            />
          </div>
          <ContentField id="layout-content" value={content} onChange={setContent} />
          <div class="toolbar">
            <button type="submit" class="primary">
              Save
            </button>
            <button type="button" onClick={() => setCreating(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <Problem message={error} />
      <TableWrap>
        <table>
          <caption class="visually-hidden">Layouts, page {page + 1}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Identifier</th>
              <th scope="col">Default</th>
              <th scope="col">Changed</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((layout) => (
              <tr key={layout._id}>
                <td>
                  <a href={layoutHref(layout._id)}>{layout.name}</a>
                </td>
                <td>
                  <code>{layout.identifier}</code>
                </td>
                <td>{layout.isDefault ? <span class="tag">Default</span> : ""}</td>
                <td>{when(layout.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {data && rows.length === 0 && <p>No layouts yet: emails go as their steps write them.</p>}
      {data && (
        <Pager
          label="Layout"
          page={page}
          hasMore={(page + 1) * PAGE_SIZE < data.totalCount}
          onPage={setPage}
        />
      )}
    </section>
  );
}

/** The layout's HTML in a text box, and what the box says about `{{{body}}}`. */
function ContentField({ id, value, onChange }: { id: string; value: string; onChange: (v: string) => void }) {
  return (
    <div class="field">
      <label for={id}>Content</label>
      <textarea
        id={id}
        rows={10}
        required
        spellcheck={false}
        aria-describedby={`${id}-hint`}
        value={value}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
      <span class="hint" id={`${id}-hint`}>
        HTML with <code>{BODY}</code> where the email's content goes; {"{{variables}}"} are filled in when
        sent
      </span>
    </div>
  );
}

/**
 * The layout with a sample paragraph as its body, in a sandboxed frame: no script in it runs, and
 * it reaches nothing of the page. Other {{variables}} show as written.
 */
export function LayoutPreview({ content }: { content: string }) {
  return (
    <iframe
      class="layout-preview"
      title="Preview"
      sandbox=""
      srcDoc={content.split(BODY).join(SAMPLE_BODY)}
    />
  );
}

/** One layout: its content edited with a live preview, made the default, deleted. */
export function LayoutView({ id }: { id: string }) {
  const path = { path: { layoutId: id } };
  const { data, error, reload, setError } = useLoad(
    () => ok(api.GET("/v1/layouts/{layoutId}", { params: path })),
    [id],
  );
  const layout = data?.data;
  const [content, setContent] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  // What is typed stays through a save or Make default; another layout opened starts from its own.
  useEffect(() => {
    if (layout) setContent(layout.content);
  }, [layout?._id]);
  const shown = content ?? layout?.content ?? "";

  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    setStatus("");
    try {
      await ok(api.PATCH("/v1/layouts/{layoutId}", { params: path, body: { content: shown } }));
      // Reloaded first: the status announces a view that already shows the change.
      await reload();
      setStatus("Layout saved.");
    } catch (failure) {
      setError(`The layout was not saved: ${(failure as Error).message}`);
    }
  }
  async function makeDefault() {
    setError(null);
    setStatus("");
    try {
      await done(api.POST("/v1/layouts/{layoutId}/default", { params: path }));
      await reload();
      setStatus("This is now the default layout.");
    } catch (failure) {
      setError(`The layout was not made the default: ${(failure as Error).message}`);
    }
  }
  async function remove() {
    if (!layout || !confirm(`Delete the layout “${layout.name}”?`)) return;
    setError(null);
    setStatus("");
    try {
      await done(api.DELETE("/v1/layouts/{layoutId}", { params: path }));
      location.hash = "#/layouts";
    } catch (failure) {
      setError(`The layout was not deleted: ${(failure as Error).message}`);
    }
  }
  return (
    <section aria-labelledby="layout-title">
      <p>
        <a href="#/layouts">Back to layouts</a>
      </p>
      <h1 id="layout-title">Layout {layout ? layout.name : ""}</h1>
      <Problem message={error} />
      <p role="status">{status}</p>
      {layout && (
        <>
          <dl class="fields">
            <div>
              <dt>Identifier</dt>
              <dd>
                <code>{layout.identifier}</code>
              </dd>
            </div>
            <div>
              <dt>Default</dt>
              <dd>{layout.isDefault ? "Yes: email steps that name no layout use it" : "No"}</dd>
            </div>
            <div>
              <dt>Changed</dt>
              <dd>{when(layout.updatedAt)}</dd>
            </div>
          </dl>
          <div class="layout-editor">
            <form class="stack" onSubmit={save} aria-label={`Edit ${layout.name}`}>
              <ContentField id="layout-edit-content" value={shown} onChange={setContent} />
              <div class="toolbar">
                <button type="submit" class="primary">
                  Save
                </button>
                {!layout.isDefault && (
                  <button type="button" onClick={makeDefault}>
                    Make default
                  </button>
                )}
                <button type="button" class="danger" onClick={remove}>
                  Delete
                </button>
              </div>
            </form>
            <div class="layout-preview-pane">
              <h2>Preview</h2>
              <LayoutPreview content={shown} />
            </div>
          </div>
        </>
      )}
    </section>
  );
}
