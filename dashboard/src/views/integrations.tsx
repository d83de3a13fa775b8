import { useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { Problem, StateBadge, Switch, TableWrap, useLoad, when } from "../common.tsx";
import type { Integration } from "../types.ts";

/** The providers Tidings delivers through (src/providers): SMTP for email, webhooks for chat. */
const PROVIDERS = [
  { id: "nodemailer", channel: "email", label: "Custom SMTP (email)" },
  { id: "slack", channel: "chat", label: "Slack (chat)" },
  { id: "discord", channel: "chat", label: "Discord (chat)" },
  { id: "msteams", channel: "chat", label: "Microsoft Teams (chat)" },
  { id: "mattermost", channel: "chat", label: "Mattermost (chat)" },
] as const;

/** The SMTP credentials the form asks for; the password is typed in and never shown again. */
const SMTP_FIELDS = [
  ["host", "SMTP host", "text"],
  ["port", "SMTP port", "text"],
  ["user", "SMTP user", "text"],
  ["password", "SMTP password", "password"],
  ["from", "From address", "email"],
  ["senderName", "Sender name", "text"],
] as const;

type SmtpField = (typeof SMTP_FIELDS)[number][0];

function NewIntegration({ onCreated }: { onCreated: () => void }) {
  const [providerId, setProviderId] = useState<(typeof PROVIDERS)[number]["id"]>("nodemailer");
  const [name, setName] = useState("");
  const [active, setActive] = useState(true);
  const [secure, setSecure] = useState(false);
  const [fields, setFields] = useState<Record<SmtpField, string>>({
    host: "",
    port: "587",
    user: "",
    password: "",
    from: "",
    senderName: "",
  });
  const [error, setError] = useState<string | null>(null);
  const provider = PROVIDERS.find((p) => p.id === providerId) ?? PROVIDERS[0];
  async function create(event: Event) {
    event.preventDefault();
    setError(null);
    const credentials =
      provider.channel === "email"
        ? {
            ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value.trim() !== "")),
            secure,
          }
        : undefined;
    try {
      await ok(
        api.POST("/v1/integrations", {
          body: {
            providerId,
            channel: provider.channel,
            active,
            ...(name.trim() ? { name: name.trim() } : {}),
            ...(credentials ? { credentials } : {}),
          },
        }),
      );
      setName("");
      setFields((f) => ({ ...f, password: "" }));
      onCreated();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  return (
    <form class="stack" onSubmit={create} aria-labelledby="new-integration-title">
      <h2 id="new-integration-title">Add an integration</h2>
      <div class="field">
        <label for="integration-provider">Provider</label>
        <select
          id="integration-provider"
          value={providerId}
          onChange={(e) => setProviderId(e.currentTarget.value as typeof providerId)}
        >
          {PROVIDERS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="integration-name">Integration name</label>
        <input
          id="integration-name"
          type="text"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </div>
      {provider.channel === "email" ? (
        <>
          {SMTP_FIELDS.map(([field, label, type]) => (
            <div key={field} class="field">
              <label for={`smtp-${field}`}>{label}</label>
              <input
                id={`smtp-${field}`}
                type={type}
                autocomplete={type === "password" ? "new-password" : "off"}
                required={field === "host" || field === "from"}
                value={fields[field]}
                onInput={(e) => {
                  const value = e.currentTarget.value;
                  setFields((f) => ({ ...f, [field]: value }));
                }}
              />
            </div>
          ))}
          <label class="check">
            <input type="checkbox" checked={secure} onChange={(e) => setSecure(e.currentTarget.checked)} />
            TLS from the first byte (port 465)
          </label>
        </>
      ) : (
        <p>
          Chat messages go to the webhook each subscriber registers for this provider: nothing to fill in.
        </p>
      )}
      <label class="check">
        <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} />
        Active
      </label>
      <button type="submit">Add integration</button>
      <Problem message={error} />
    </form>
  );
}

/** A stored secret comes back masked as this; sent back, the API keeps the stored value. */
const MASK = "********";
const SECRET = new Set<string>(["password"]);

/**
 * An integration's settings, to change: its name, active state and (email) SMTP settings. A secret is
 * never shown: its box starts empty, and left empty the stored one is kept (the mask is sent back).
 */
function EditIntegration({
  integration,
  onDone,
}: {
  integration: Integration;
  onDone: (saved: boolean) => void;
}) {
  const stored = (integration.credentials ?? {}) as Record<string, unknown>;
  const [name, setName] = useState(integration.name);
  const [active, setActive] = useState(integration.active);
  const [secure, setSecure] = useState(stored.secure === true);
  const [fields, setFields] = useState<Record<SmtpField, string>>(() => {
    const text = (field: SmtpField) =>
      SECRET.has(field) || stored[field] === undefined || stored[field] === null ? "" : String(stored[field]);
    return {
      host: text("host"),
      port: text("port"),
      user: text("user"),
      password: "",
      from: text("from"),
      senderName: text("senderName"),
    };
  });
  const [error, setError] = useState<string | null>(null);
  const email = integration.channel === "email";
  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    let credentials: Record<string, unknown> | undefined;
    if (email) {
      // Every credential the form does not show is sent back as it is, so nothing is lost.
      credentials = { ...stored, secure };
      for (const [field, value] of Object.entries(fields)) {
        if (SECRET.has(field)) {
          if (value !== "") credentials[field] = value;
          else if (stored[field] === MASK) credentials[field] = MASK;
          else delete credentials[field];
        } else if (value.trim() === "") delete credentials[field];
        else credentials[field] = value.trim();
      }
    }
    try {
      await ok(
        api.PUT("/v1/integrations/{integrationId}", {
          params: { path: { integrationId: integration._id } },
          body: { name: name.trim(), active, ...(credentials ? { credentials } : {}) },
        }),
      );
      onDone(true);
    } catch (failure) {
      setError(`The integration was not saved: ${(failure as Error).message}`);
    }
  }
  return (
    <form class="stack panel" onSubmit={save} aria-labelledby="edit-integration-title">
      <h2 id="edit-integration-title">Edit {integration.name}</h2>
      <div class="field">
        <label for="edit-integration-name">Integration name</label>
        <input
          id="edit-integration-name"
          type="text"
          required
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </div>
      {email &&
        SMTP_FIELDS.map(([field, label, type]) => (
          <div key={field} class="field">
            <label for={`edit-smtp-${field}`}>{label}</label>
            <input
              id={`edit-smtp-${field}`}
              type={type}
              autocomplete={type === "password" ? "new-password" : "off"}
              aria-describedby={SECRET.has(field) ? "edit-secret-note" : undefined}
              value={fields[field]}
              onInput={(e) => {
                const value = e.currentTarget.value;
                setFields((f) => ({ ...f, [field]: value }));
              }}
            />
          </div>
        ))}
      {email && (
        <>
          <p id="edit-secret-note" class="note">
            {stored.password === MASK
              ? "A password is stored and never shown: leave it empty to keep it."
              : "No password is stored."}
          </p>
          <label class="check">
            <input type="checkbox" checked={secure} onChange={(e) => setSecure(e.currentTarget.checked)} />
            TLS from the first byte (port 465)
          </label>
        </>
      )}
      <label class="check">
        <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} />
        Active
      </label>
      <div class="actions">
        <button type="submit" class="primary">
          Save changes
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
      <Problem message={error} />
    </form>
  );
}

/** "Send test": an email through this integration now, to the address given; the SMTP server's answer shown. */
function SendTestEmail({ integration, onDone }: { integration: Integration; onDone: () => void }) {
  const [to, setTo] = useState("");
  const [status, setStatus] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function send(event: Event) {
    event.preventDefault();
    setError(null);
    setStatus("");
    setBusy(true);
    try {
      await ok(
        api.POST("/v1/events/test/email", {
          body: {
            to: to.trim(),
            subject: "A test email from Tidings",
            content: `<p>This test email went through the integration “{{integration}}”.</p>`,
            contentType: "customHtml",
            payload: { integration: integration.name },
            integrationId: integration._id,
          },
        }),
      );
      setStatus(`Test email sent to ${to.trim()}.`);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="stack panel" onSubmit={send} aria-labelledby="test-email-title">
      <h2 id="test-email-title">Send a test email through {integration.name}</h2>
      <div class="field">
        <label for="test-email-to">To</label>
        <input
          id="test-email-to"
          type="email"
          required
          autocomplete="email"
          value={to}
          onInput={(e) => setTo(e.currentTarget.value)}
        />
      </div>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Send
        </button>
        <button type="button" onClick={onDone}>
          Close
        </button>
      </div>
      <p role="status">{status}</p>
      <Problem message={error} />
    </form>
  );
}

/**
 * The environment's integrations: list, add, switch on and off, delete. Secrets never come back from
 * the API (it masks them) and are never shown here; the form's password field only sends one.
 */
export function Integrations() {
  const { data, error, reload, setError } = useLoad(() => ok(api.GET("/v1/integrations")), []);
  const [editing, setEditing] = useState<string | null>(null);
  const [testing, setTesting] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  async function makePrimary(id: string, name: string) {
    setStatus("");
    try {
      await ok(
        api.POST("/v1/integrations/{integrationId}/set-primary", { params: { path: { integrationId: id } } }),
      );
      setStatus(`${name} is now the primary email integration.`);
      await reload();
    } catch (failure) {
      setError(`“${name}” was not made primary: ${(failure as Error).message}`);
    }
  }
  async function setActive(id: string, name: string, active: boolean) {
    try {
      await ok(
        api.PUT("/v1/integrations/{integrationId}", {
          params: { path: { integrationId: id } },
          body: { active },
        }),
      );
      await reload();
    } catch (failure) {
      setError(`“${name}” was not changed: ${(failure as Error).message}`);
    }
  }
  async function remove(id: string, name: string) {
    if (!confirm(`Delete the integration “${name}”?`)) return;
    try {
      await ok(api.DELETE("/v1/integrations/{integrationId}", { params: { path: { integrationId: id } } }));
      await reload();
    } catch (failure) {
      setError(`“${name}” was not deleted: ${(failure as Error).message}`);
    }
  }
  const rows = data?.data ?? [];
  return (
    <section aria-labelledby="integrations-title">
      <h1 id="integrations-title">Integrations</h1>
      <Problem message={error} />
      <p role="status">{status}</p>
      <TableWrap>
        <table>
          <caption class="visually-hidden">Integrations of this environment</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Provider</th>
              <th scope="col">Channel</th>
              <th scope="col">Identifier</th>
              <th scope="col">Primary</th>
              <th scope="col">Created</th>
              <th scope="col">Active</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((integration) => (
              <tr key={integration._id}>
                <td>{integration.name}</td>
                <td>{integration.providerId}</td>
                <td>{integration.channel}</td>
                <td>
                  <code>{integration.identifier}</code>
                </td>
                <td>
                  {integration.primary ? (
                    <StateBadge state="primary" />
                  ) : integration.channel === "email" ? (
                    <button
                      type="button"
                      aria-label={`Make primary: ${integration.name}`}
                      onClick={() => makePrimary(integration._id, integration.name)}
                    >
                      Make primary
                    </button>
                  ) : (
                    ""
                  )}
                </td>
                <td>{when(integration.createdAt)}</td>
                <td>
                  <Switch
                    label={`${integration.name} active`}
                    checked={integration.active}
                    onChange={(active) => setActive(integration._id, integration.name, active)}
                  />
                </td>
                <td>
                  <div class="actions">
                    <button
                      type="button"
                      aria-label={`Edit ${integration.name}`}
                      onClick={() => {
                        setStatus("");
                        setTesting(null);
                        setEditing(integration._id);
                      }}
                    >
                      Edit
                    </button>
                    {integration.channel === "email" && (
                      <button
                        type="button"
                        aria-label={`Send test: ${integration.name}`}
                        onClick={() => {
                          setEditing(null);
                          setTesting(integration._id);
                        }}
                      >
                        Send test
                      </button>
                    )}
                    <button
                      type="button"
                      aria-label={`Delete ${integration.name}`}
                      onClick={() => remove(integration._id, integration.name)}
                    >
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {editing && rows.some((i) => i._id === editing) && (
        <EditIntegration
          key={editing}
          integration={rows.find((i) => i._id === editing) as Integration}
          onDone={(saved) => {
            setEditing(null);
            if (saved) {
              setStatus("Integration saved.");
              reload();
            }
          }}
        />
      )}
      {testing && rows.some((i) => i._id === testing) && (
        <SendTestEmail
          key={testing}
          integration={rows.find((i) => i._id === testing) as Integration}
          onDone={() => setTesting(null)}
        />
      )}
      {data && rows.length === 0 && (
        <p>No integrations yet: email and chat steps are skipped until one is active.</p>
      )}
      <NewIntegration onCreated={reload} />
    </section>
  );
}
