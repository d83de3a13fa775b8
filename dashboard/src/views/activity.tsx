import { useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import {
  CHANNEL_LABELS,
  channelLabel,
  Pager,
  Problem,
  StateBadge,
  TableWrap,
  useLoad,
  when,
} from "../common.tsx";
import type { Notification } from "../types.ts";

const PAGE_SIZE = 20;
const STATUSES = ["delivered", "failed", "skipped", "canceled", "pending"] as const;
type Status = (typeof STATUSES)[number];
const CHART_DAYS = 14;

/** The last days' notifications (from the stats routes): the counts, and a bar per day. */
function Chart() {
  const stats = useLoad(() => ok(api.GET("/v1/notifications/stats")), []);
  const graph = useLoad(
    () => ok(api.GET("/v1/notifications/graph/stats", { params: { query: { days: CHART_DAYS } } })),
    [],
  );
  const counts = new Map((graph.data?.data ?? []).map((day) => [day._id, day.count]));
  const today = new Date();
  const days = Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = new Date(
      Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (CHART_DAYS - 1 - i)),
    );
    const key = day.toISOString().slice(0, 10);
    return { key, count: counts.get(key) ?? 0 };
  });
  const most = Math.max(1, ...days.map((d) => d.count));
  return (
    <figure class="panel" aria-labelledby="chart-title">
      <figcaption id="chart-title">
        <strong>Last {CHART_DAYS} days</strong>
      </figcaption>
      {stats.data && (
        <dl class="stats">
          <div>
            <dt>This week</dt>
            <dd>{stats.data.data.weeklySent}</dd>
          </div>
          <div>
            <dt>This month</dt>
            <dd>{stats.data.data.monthlySent}</dd>
          </div>
        </dl>
      )}
      <ol class="chart" aria-label={`Notifications per day, last ${CHART_DAYS} days`}>
        {days.map((d) => (
          <li key={d.key} title={`${d.key}: ${d.count}`}>
            <span class="visually-hidden">
              {d.key}: {d.count}
            </span>
            <div class="bar" style={{ height: `${(d.count / most) * 100}%` }} />
          </li>
        ))}
      </ol>
      <Problem message={stats.error ?? graph.error} />
    </figure>
  );
}

/** The notifications, newest first, filtered by workflow, subscriber and transactionId. */
export function Activity() {
  const [page, setPage] = useState(0);
  const [filters, setFilters] = useState({
    workflow: "",
    subscriber: "",
    transactionId: "",
    status: "" as Status | "",
    channel: "",
  });
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
              ...(applied.status ? { status: applied.status } : {}),
              ...(applied.channel ? { channels: applied.channel } : {}),
            },
          },
        }),
      ),
    [page, applied],
  );
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title">Activity</h1>
      <Chart />
      <form
        class="inline"
        aria-label="Filter notifications"
        onSubmit={(event) => {
          event.preventDefault();
          setPage(0);
          setApplied({ ...filters });
        }}
      >
        <div class="field">
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
        </div>
        <div class="field">
          <label for="filter-subscriber">Subscriber id</label>
          <input
            id="filter-subscriber"
            type="text"
            value={filters.subscriber}
            onInput={(e) => setFilters({ ...filters, subscriber: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="filter-transaction">Transaction id</label>
          <input
            id="filter-transaction"
            type="text"
            value={filters.transactionId}
            onInput={(e) => setFilters({ ...filters, transactionId: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="filter-status">Status</label>
          <select
            id="filter-status"
            value={filters.status}
            onChange={(e) => setFilters({ ...filters, status: e.currentTarget.value as Status | "" })}
          >
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-channel">Channel</label>
          <select
            id="filter-channel"
            value={filters.channel}
            onChange={(e) => setFilters({ ...filters, channel: e.currentTarget.value })}
          >
            <option value="">Any channel</option>
            {Object.entries(CHANNEL_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Filter</button>
      </form>
      <Problem message={error} />
      <TableWrap>
        <table>
          <caption class="visually-hidden">Notifications, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Status</th>
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
                  <StateBadge state={n.status} />
                </td>
                <td>
                  <a href={`#/activity/${encodeURIComponent(n._id)}`}>{when(n.createdAt)}</a>
                </td>
                <td>{n.template.name}</td>
                <td>{n.subscriber.subscriberId}</td>
                <td>
                  <code>{n.transactionId}</code>
                </td>
                <td>{n.channels.map(channelLabel).join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
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
            {job.step.name || job.type} <StateBadge state={job.status} />
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
            <div>
              <dt>Status</dt>
              <dd>
                <StateBadge state={n.status} />
              </dd>
            </div>
          </dl>
          <h2>Payload</h2>
          <pre>{JSON.stringify(n.payload, null, 2)}</pre>
          <h2>Jobs</h2>
          <Timeline notification={n} />
        </>
      )}
    </section>
  );
}
