import { useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { Pager, Problem, useLoad, when } from "../common.tsx";
import type { Notification } from "../types.ts";

const PAGE_SIZE = 20;

/** The notifications, newest first, filtered by workflow, subscriber and transactionId. */
export function Activity() {
  const [page, setPage] = useState(0);
  const [filters, setFilters] = useState({ workflow: "", subscriber: "", transactionId: "" });
  const [applied, setApplied] = useState(filters);
  const workflows = useLoad(() => ok(api.GET("/v1/workflows", { params: { query: { limit: 100 } } })), []);
  const { data, error } = useLoad(
    () =>
      ok(
        api.GET("/v1/notifications", {
          params: {
            query: {
              page,
              limit: PAGE_SIZE,
              ...(applied.workflow ? { templates: applied.workflow } : {}),
              ...(applied.subscriber ? { subscriberIds: applied.subscriber } : {}),
              ...(applied.transactionId ? { transactionId: applied.transactionId } : {}),
            },
          },
        }),
      ),
    [page, applied],
  );
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title">Activity</h1>
      <form
        class="inline"
        aria-label="Filter notifications"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(0);
          setApplied({ ...filters });
        }}
      >
        <label for="filter-workflow">Workflow</label>
        <select
          id="filter-workflow"
          value={filters.workflow}
          onChange={(e) => setFilters({ ...filters, workflow: e.currentTarget.value })}
        >
          <option value="">Any workflow</option>
          {(workflows.data?.data ?? []).map((w) => (
            <option key={w._id} value={w._id}>
              {w.name}
            </option>
          ))}
        </select>
        <label for="filter-subscriber">Subscriber id</label>
        <input
          id="filter-subscriber"
          type="text"
          value={filters.subscriber}
          onInput={(e) => setFilters({ ...filters, subscriber: e.currentTarget.value })}
        />
        <label for="filter-transaction">Transaction id</label>
        <input
          id="filter-transaction"
          type="text"
          value={filters.transactionId}
          onInput={(e) => setFilters({ ...filters, transactionId: e.currentTarget.value })}
        />
        <button type="submit">Filter</button>
      </form>
      <Problem message={error} />
      <table>
        <caption class="visually-hidden">Notifications, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Workflow</th>
            <th scope="col">Subscriber</th>
            <th scope="col">Transaction</th>
            <th scope="col">Channels</th>
          </tr>
        </thead>
        <tbody>
          {(data?.data ?? []).map((n) => (
            <tr key={n._id}>
              <td>
                <a href={`#/activity/${encodeURIComponent(n._id)}`}>{when(n.createdAt)}</a>
              </td>
              <td>{n.template.name}</td>
              <td>{n.subscriber.subscriberId}</td>
              <td>
                <code>{n.transactionId}</code>
              </td>
              <td>{n.channels.join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data && data.data.length === 0 && <p>No notifications.</p>}
      {data && <Pager label="Notification" page={page} hasMore={data.hasMore} onPage={setPage} />}
    </section>
  );
}

function Timeline({ notification }: { notification: Notification }) {
  return (
    <ol class="timeline">
      {notification.jobs.map((job) => (
        <li key={job._id}>
          <h3>
            {job.step.name || job.type} <span class={`status status-${job.status}`}>{job.status}</span>
          </h3>
          <p>
            <small>
              {job.type}, created {when(job.createdAt)}, attempts {job.attempts}
            </small>
          </p>
          <ul aria-label={`Execution details of ${job.step.name || job.type}`}>
            {job.executionDetails.map((detail) => (
              <li key={detail._id}>
                <time dateTime={detail.createdAt}>{when(detail.createdAt)}</time>{" "}
                <strong>{detail.status}</strong> {detail.detail}
                {detail.raw && (
                  <details>
                    <summary>Raw</summary>
                    <pre>{detail.raw}</pre>
                  </details>
                )}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}

export function NotificationView({ id }: { id: string }) {
  const { data, error } = useLoad(
    () => ok(api.GET("/v1/notifications/{notificationId}", { params: { path: { notificationId: id } } })),
    [id],
  );
  const n = data?.data;
  return (
    <section aria-labelledby="notification-title">
      <p>
        <a href="#/activity">Back to activity</a>
      </p>
      <h1 id="notification-title">Notification {n ? `of ${n.template.name}` : ""}</h1>
      <Problem message={error} />
      {n && (
        <>
          <dl class="fields">
            <div>
              <dt>Subscriber</dt>
              <dd>
                <a href={`#/subscribers/${encodeURIComponent(n.subscriber.subscriberId)}`}>
                  {n.subscriber.subscriberId}
                </a>
              </dd>
            </div>
            <div>
              <dt>Transaction</dt>
              <dd>
                <code>{n.transactionId}</code>
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{when(n.createdAt)}</dd>
            </div>
          </dl>
          <h2>Jobs</h2>
          <Timeline notification={n} />
        </>
      )}
    </section>
  );
}
