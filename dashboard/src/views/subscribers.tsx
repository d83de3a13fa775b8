import { useEffect, useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { Pager, Problem, useLoad, when } from "../common.tsx";

const PAGE_SIZE = 20;

/**
 * The environment's subscribers, a page at a time; the search box asks the API for those whose id,
 * names, email or phone contain the text (as you type, after a short pause), and, given an exact
 * subscriberId, opens that subscriber.
 */
export function Subscribers() {
  const [page, setPage] = useState(0);
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  // The API is asked once typing pauses, not on every key.
  useEffect(() => {
    const timer = setTimeout(() => {
      setQuery(search.trim());
      setPage(0);
    }, 250);
    return () => clearTimeout(timer);
  }, [search]);
  const { data, error, setError } = useLoad(
    () =>
      ok(
        api.GET("/v1/subscribers", {
          params: { query: { page, limit: PAGE_SIZE, ...(query ? { search: query } : {}) } },
        }),
      ),
    [page, query],
  );
  const rows = data?.data ?? [];
  async function open(event: Event) {
    event.preventDefault();
    if (!search.trim()) return;
    try {
      await ok(
        api.GET("/v1/subscribers/{subscriberId}", { params: { path: { subscriberId: search.trim() } } }),
      );
      location.hash = `#/subscribers/${encodeURIComponent(search.trim())}`;
    } catch (failure) {
      setError(`No subscriber with that subscriberId: ${(failure as Error).message}`);
    }
  }
  return (
    <section aria-labelledby="subscribers-title">
      <h1 id="subscribers-title">Subscribers</h1>
      <search>
        <form class="inline" onSubmit={open}>
          <label for="subscriber-search">Search subscribers</label>
          <input
            id="subscriber-search"
            type="search"
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
          <button type="submit">Open by subscriberId</button>
        </form>
      </search>
      <Problem message={error} />
      <table>
        <caption class="visually-hidden">
          {query ? `Subscribers matching “${query}”` : "Subscribers"}, page {page + 1}
        </caption>
        <thead>
          <tr>
            <th scope="col">subscriberId</th>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s._id}>
              <td>
                <a href={`#/subscribers/${encodeURIComponent(s.subscriberId)}`}>{s.subscriberId}</a>
              </td>
              <td>{[s.firstName, s.lastName].filter(Boolean).join(" ")}</td>
              <td>{s.email}</td>
              <td>{when(s.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data && rows.length === 0 && <p>No subscribers{query ? " match" : ""}.</p>}
      {data && <Pager label="Subscriber" page={page} hasMore={data.hasMore} onPage={setPage} />}
    </section>
  );
}

const CHANNELS = ["in_app", "email", "sms", "chat", "push"] as const;

export function SubscriberView({ id }: { id: string }) {
  const path = { path: { subscriberId: id } };
  const subscriber = useLoad(() => ok(api.GET("/v1/subscribers/{subscriberId}", { params: path })), [id]);
  const feed = useLoad(
    () => ok(api.GET("/v1/subscribers/{subscriberId}/notifications/feed", { params: path })),
    [id],
  );
  const preferences = useLoad(
    () => ok(api.GET("/v1/subscribers/{subscriberId}/preferences", { params: path })),
    [id],
  );
  const s = subscriber.data?.data;
  const fields: [string, string | undefined][] = s
    ? [
        ["subscriberId", s.subscriberId],
        ["First name", s.firstName],
        ["Last name", s.lastName],
        ["Email", s.email],
        ["Phone", s.phone],
        ["Locale", s.locale],
        ["Online", s.isOnline ? "yes" : "no"],
        ["Created", when(s.createdAt)],
      ]
    : [];
  return (
    <section aria-labelledby="subscriber-title">
      <p>
        <a href="#/subscribers">Back to subscribers</a>
      </p>
      <h1 id="subscriber-title">Subscriber {id}</h1>
      <Problem message={subscriber.error} />
      <dl class="fields">
        {fields.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value || "—"}</dd>
          </div>
        ))}
      </dl>
      <h2>In-app feed</h2>
      <Problem message={feed.error} />
      {feed.data && feed.data.data.length === 0 && <p>No in-app messages.</p>}
      <ul class="feed">
        {(feed.data?.data ?? []).map((m) => (
          <li key={m._id}>
            <span>{m.content}</span> <small>{when(m.createdAt)}</small>{" "}
            <small>{m.read ? "read" : m.seen ? "seen" : "unseen"}</small>
          </li>
        ))}
      </ul>
      <h2>Preferences</h2>
      <Problem message={preferences.error} />
      <table>
        <caption class="visually-hidden">Preferences per workflow and channel</caption>
        <thead>
          <tr>
            <th scope="col">Workflow</th>
            <th scope="col">Enabled</th>
            {CHANNELS.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(preferences.data?.data ?? []).map((p) => (
            <tr key={p.template._id}>
              <td>{p.template.name}</td>
              <td>{p.preference.enabled ? "yes" : "no"}</td>
              {CHANNELS.map((c) => (
                <td key={c}>{p.preference.channels[c] ? "on" : "off"}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
