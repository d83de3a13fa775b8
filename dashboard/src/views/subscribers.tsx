import { useEffect, useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { channelLabel, Pager, Problem, StateBadge, Switch, TableWrap, useLoad, when } from "../common.tsx";

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
  const [creating, setCreating] = useState(false);
  return (
    <section aria-labelledby="subscribers-title">
      <div class="title-row">
        <h1 id="subscribers-title">Subscribers</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New subscriber
          </button>
        )}
      </div>
      {creating && <NewSubscriber onCancel={() => setCreating(false)} />}
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
      <TableWrap>
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
      </TableWrap>
      {data && rows.length === 0 && <p>No subscribers{query ? " match" : ""}.</p>}
      {data && <Pager label="Subscriber" page={page} hasMore={data.hasMore} onPage={setPage} />}
    </section>
  );
}

/** The profile fields a person edits here; `subscriberId` is fixed once made. */
const PROFILE = [
  ["firstName", "First name", "text"],
  ["lastName", "Last name", "text"],
  ["email", "Email", "email"],
  ["phone", "Phone", "tel"],
  ["locale", "Locale", "text"],
  ["timezone", "Timezone", "text"],
] as const;
type ProfileField = (typeof PROFILE)[number][0];
type Profile = Record<ProfileField, string>;
const emptyProfile = (): Profile => ({
  firstName: "",
  lastName: "",
  email: "",
  phone: "",
  locale: "",
  timezone: "",
});

function ProfileInputs({
  prefix,
  profile,
  onChange,
}: {
  prefix: string;
  profile: Profile;
  onChange: (profile: Profile) => void;
}) {
  return (
    <>
      {PROFILE.map(([field, label, type]) => (
        <div class="field" key={field}>
          <label for={`${prefix}-${field}`}>{label}</label>
          <input
            id={`${prefix}-${field}`}
            type={type}
            autocomplete="off"
            value={profile[field]}
            onInput={(e) => onChange({ ...profile, [field]: e.currentTarget.value })}
          />
        </div>
      ))}
    </>
  );
}

/** "New subscriber": its subscriberId and profile; saved, its page opens. */
function NewSubscriber({ onCancel }: { onCancel: () => void }) {
  const [subscriberId, setSubscriberId] = useState("");
  const [profile, setProfile] = useState(emptyProfile);
  const [error, setError] = useState<string | null>(null);
  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    const id = subscriberId.trim();
    const fields = Object.fromEntries(
      Object.entries(profile)
        .map(([field, value]) => [field, value.trim()])
        .filter(([, value]) => value !== ""),
    );
    try {
      await ok(api.POST("/v1/subscribers", { body: { subscriberId: id, ...fields } }));
      location.hash = `#/subscribers/${encodeURIComponent(id)}`;
    } catch (failure) {
      setError(`The subscriber was not saved: ${(failure as Error).message}`);
    }
  }
  return (
    <form class="stack panel" onSubmit={save} aria-labelledby="new-subscriber-title">
      <h2 id="new-subscriber-title">New subscriber</h2>
      <div class="field">
        <label for="new-subscriber-id">Subscriber ID</label>
        <input
          id="new-subscriber-id"
          type="text"
          required
          autocomplete="off"
          value={subscriberId}
          onInput={(e) => setSubscriberId(e.currentTarget.value)}
        />
      </div>
      <ProfileInputs prefix="new-subscriber" profile={profile} onChange={setProfile} />
      <div class="actions">
        <button type="submit" class="primary">
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <Problem message={error} />
    </form>
  );
}

const CHANNELS = ["in_app", "email", "sms", "chat", "push"] as const;

/** A subscriber's profile, editable; what changed is sent, a field emptied is cleared. */
function SubscriberProfile({ id }: { id: string }) {
  const path = { path: { subscriberId: id } };
  const { data, error, setError, reload } = useLoad(
    () => ok(api.GET("/v1/subscribers/{subscriberId}", { params: path })),
    [id],
  );
  const [profile, setProfile] = useState<Profile | null>(null);
  const [status, setStatus] = useState("");
  const [editing, setEditing] = useState(false);
  const s = data?.data;
  useEffect(() => {
    if (!s) return;
    setProfile({
      firstName: s.firstName ?? "",
      lastName: s.lastName ?? "",
      email: s.email ?? "",
      phone: s.phone ?? "",
      locale: s.locale ?? "",
      timezone: (s as { timezone?: string }).timezone ?? "",
    });
  }, [s]);
  async function save(event: Event) {
    event.preventDefault();
    if (!profile || !s) return;
    setError(null);
    setStatus("");
    const before = s as unknown as Record<string, string | undefined>;
    const changed = Object.fromEntries(
      Object.entries(profile)
        .map(([field, value]) => [field, value.trim()])
        .filter(([field, value]) => value !== (before[field as string] ?? "")),
    );
    if (Object.keys(changed).length === 0) {
      setStatus("Nothing changed.");
      setEditing(false);
      return;
    }
    try {
      await ok(api.PUT("/v1/subscribers/{subscriberId}", { params: path, body: changed }));
      setStatus("Subscriber saved.");
      setEditing(false);
      await reload();
    } catch (failure) {
      setError(`The subscriber was not saved: ${(failure as Error).message}`);
    }
  }
  const shown: [string, string | undefined][] = s
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
    <>
      <Problem message={error} />
      <dl class="fields">
        {shown.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value || "—"}</dd>
          </div>
        ))}
      </dl>
      <p role="status">{status}</p>
      {s && !editing && (
        <button type="button" onClick={() => setEditing(true)}>
          Edit
        </button>
      )}
      {s && profile && editing && (
        <form class="stack panel" onSubmit={save} aria-labelledby="edit-subscriber-title">
          <h2 id="edit-subscriber-title">Edit subscriber</h2>
          <ProfileInputs prefix="subscriber" profile={profile} onChange={setProfile} />
          <div class="actions">
            <button type="submit" class="primary">
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </>
  );
}

/** Preferences: per workflow, a switch for the whole workflow and one per channel it has. */
function Preferences({ id }: { id: string }) {
  const path = { path: { subscriberId: id } };
  const { data, error, setError, reload } = useLoad(
    () => ok(api.GET("/v1/subscribers/{subscriberId}/preferences", { params: path })),
    [id],
  );
  async function change(
    workflowId: string,
    name: string,
    body: { enabled: boolean } | { channel: { type: (typeof CHANNELS)[number]; enabled: boolean } },
  ) {
    setError(null);
    try {
      await ok(
        api.PATCH("/v1/subscribers/{subscriberId}/preferences/{workflowId}", {
          params: { path: { subscriberId: id, workflowId } },
          body,
        }),
      );
      await reload();
    } catch (failure) {
      setError(`The preference for ${name} was not changed: ${(failure as Error).message}`);
    }
  }
  const rows = data?.data ?? [];
  return (
    <>
      <h2>Preferences</h2>
      <Problem message={error} />
      {data && rows.length === 0 && <p>No workflows yet.</p>}
      <ul class="preferences" aria-label="Preferences per workflow and channel">
        {rows.map((p) => {
          const name = p.template.name;
          const critical = p.template.critical;
          const channels = p.preference.channels as Partial<Record<(typeof CHANNELS)[number], boolean>>;
          const titleId = `preference-${p.template._id}`;
          return (
            <li key={p.template._id}>
              <fieldset aria-labelledby={titleId}>
                <span class="preference-name" id={titleId}>
                  {name} {critical && <span class="tag">critical</span>}
                </span>
                <span class="preference-switch">
                  <span aria-hidden="true">all</span>
                  <Switch
                    label={`${name} all channels`}
                    checked={p.preference.enabled}
                    disabled={critical}
                    onChange={(enabled) => change(p.template._id, name, { enabled })}
                  />
                </span>
                {CHANNELS.filter((c) => channels[c] !== undefined).map((c) => (
                  <span class="preference-switch" key={c}>
                    <span aria-hidden="true">{channelLabel(c)}</span>
                    <Switch
                      label={`${name} ${channelLabel(c)}`}
                      checked={channels[c] === true}
                      disabled={critical}
                      onChange={(enabled) => change(p.template._id, name, { channel: { type: c, enabled } })}
                    />
                  </span>
                ))}
              </fieldset>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** The subscriber's messages of every channel, newest first. */
function Messages({ id }: { id: string }) {
  const [page, setPage] = useState(0);
  const { data, error } = useLoad(
    () => ok(api.GET("/v1/messages", { params: { query: { subscriberId: id, page, limit: 20 } } })),
    [id, page],
  );
  const workflows = useLoad(() => ok(api.GET("/v1/workflows", { params: { query: { limit: 100 } } })), []);
  const names = new Map((workflows.data?.data ?? []).map((w) => [w._id, w.name]));
  const rows = data?.data ?? [];
  return (
    <>
      <h2>Messages</h2>
      <Problem message={error} />
      {data && rows.length === 0 && <p>No messages yet.</p>}
      {rows.length > 0 && (
        <TableWrap>
          <table>
            <caption class="visually-hidden">Messages of every channel, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Workflow</th>
                <th scope="col">Channel</th>
                <th scope="col">Content</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => (
                <tr key={m._id}>
                  <td>{when(m.createdAt)}</td>
                  <td>{names.get(m._templateId) ?? m.templateIdentifier}</td>
                  <td>{channelLabel(m.channel)}</td>
                  <td>{messageText(m)}</td>
                  <td>
                    <StateBadge state={messageState(m)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {data && <Pager label="Message" page={page} hasMore={data.hasMore} onPage={setPage} />}
    </>
  );
}

type Message = { channel: string; content?: unknown; subject?: string; status?: string; read?: boolean };
function messageText(m: Message): string {
  if (m.subject) return m.subject;
  return typeof m.content === "string" ? m.content : "";
}
function messageState(m: Message): string {
  if (m.status === "error") return "failed";
  if (m.channel === "in_app") return m.read ? "read" : "delivered";
  return m.status === "sent" ? "delivered" : (m.status ?? "delivered");
}

export function SubscriberView({ id }: { id: string }) {
  return (
    <section aria-labelledby="subscriber-title">
      <p>
        <a href="#/subscribers">Back to subscribers</a>
      </p>
      <h1 id="subscriber-title">Subscriber {id}</h1>
      <SubscriberProfile id={id} />
      <Messages id={id} />
      <Preferences id={id} />
    </section>
  );
}
