import { useState } from "preact/hooks";
import { api, knownKeys, ok, rememberKey, storedKey, storeKey } from "../api.ts";
import { Problem, Switch, TableWrap, useLoad, when } from "../common.tsx";

export interface CurrentEnvironment {
  _id: string;
  name: string;
}

/**
 * The environment signed into: its name and identifiers, its API keys (masked; "Regenerate" replaces
 * the key this page uses, and the old one stops working), the HMAC setting for subscriber sessions,
 * and the organization's other environments to switch to.
 */
export function Settings({
  current,
  onSwitch,
}: {
  current: CurrentEnvironment;
  onSwitch: (environment: CurrentEnvironment) => void;
}) {
  const me = useLoad(() => ok(api.GET("/v1/environments/me")), []);
  const keys = useLoad(() => ok(api.GET("/v1/environments/api-keys")), []);
  const environments = useLoad(() => ok(api.GET("/v1/environments")), []);
  const [status, setStatus] = useState("");
  const [newKey, setNewKey] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const env = me.data?.data;

  async function regenerate() {
    if (!confirm("Regenerate the API key? The current key stops working at once.")) return;
    setError(null);
    setStatus("");
    try {
      const [created] = (await ok(api.POST("/v1/environments/api-keys/regenerate"))).data;
      if (!created) throw new Error("no key came back");
      // The key this page signed in with is revoked: the new one takes its place.
      storeKey(created.key);
      rememberKey(current._id, created.key);
      setNewKey(created.key);
      setStatus("A new API key was made. The previous key no longer works: update where it is used.");
      await keys.reload();
    } catch (failure) {
      setError(`The key was not regenerated: ${(failure as Error).message}`);
    }
  }

  async function setHmac(hmac: boolean) {
    setError(null);
    setStatus("");
    try {
      await ok(api.PUT("/v1/environments/me", { body: { hmac } }));
      setStatus(
        hmac ? "Subscriber sessions now need an HMAC." : "Subscriber sessions no longer need an HMAC.",
      );
      await me.reload();
    } catch (failure) {
      setError(`The HMAC setting was not changed: ${(failure as Error).message}`);
    }
  }

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <Problem message={me.error ?? error} />
      <p role="status">{status}</p>
      {env && (
        <dl class="fields">
          <div>
            <dt>Environment</dt>
            <dd>{env.name}</dd>
          </div>
          <div>
            <dt>Application identifier</dt>
            <dd>
              <code>{env.identifier}</code>
            </dd>
          </div>
          <div>
            <dt>Environment ID</dt>
            <dd>
              <code>{env._id}</code>
            </dd>
          </div>
        </dl>
      )}

      <h2 id="keys-title">API keys</h2>
      <Problem message={keys.error} />
      {newKey && (
        <div class="panel">
          <p>
            <strong>The new key, shown this once:</strong>
          </p>
          <p>
            <code class="secret">{newKey}</code>
          </p>
        </div>
      )}
      <TableWrap>
        <table aria-labelledby="keys-title">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {(keys.data?.data ?? []).map((key) => (
              <tr key={key._id}>
                <td>
                  <code>{key.key}</code>
                </td>
                <td>{when(key.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <button type="button" class="danger" onClick={regenerate}>
        Regenerate
      </button>

      <h2>Subscriber sessions</h2>
      {env && (
        <div class="inline">
          <Switch
            label="Require HMAC for subscriber sessions"
            checked={env.hmac}
            disabled={env.name === "Production" && env.hmac}
            onChange={setHmac}
          />
          <span>Require HMAC for subscriber sessions</span>
        </div>
      )}
      <p class="note">
        With HMAC on, the inbox must send the HMAC-SHA256 of the subscriberId, keyed with the API key.
        Production always requires it.
      </p>

      <h2>Environments</h2>
      <Problem message={environments.error} />
      <ul class="groups" aria-label="The organization's environments">
        {(environments.data?.data ?? []).map((e) => (
          <li key={e._id}>
            <span class="group-name">
              {e.name} {e._id === current._id && <span class="tag">current</span>}
            </span>
            {e._id !== current._id && <SwitchEnvironment target={e} onSwitch={onSwitch} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Switches to another environment: at once with a key this tab already holds for it, else after its
 * key is typed in (the API keeps keys only as hashes, so none can be fetched).
 */
function SwitchEnvironment({
  target,
  onSwitch,
}: {
  target: CurrentEnvironment;
  onSwitch: (environment: CurrentEnvironment) => void;
}) {
  const [asking, setAsking] = useState(false);
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  async function use(candidate: string) {
    setError(null);
    const previous = storedKey();
    storeKey(candidate);
    try {
      const { data } = await ok(api.GET("/v1/environments/me"));
      if (data._id !== target._id) throw new Error(`that key opens ${data.name}, not ${target.name}`);
      rememberKey(data._id, candidate);
      onSwitch({ _id: data._id, name: data.name });
    } catch (failure) {
      if (previous) storeKey(previous);
      setAsking(true);
      setError(`Not switched: ${(failure as Error).message}`);
    }
  }
  const known = knownKeys()[target._id];
  if (!asking) {
    return (
      <button type="button" onClick={() => (known ? use(known) : setAsking(true))}>
        Switch to {target.name}
      </button>
    );
  }
  const id = `switch-key-${target._id}`;
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        use(key.trim());
      }}
    >
      <div class="field">
        <label for={id}>API key for {target.name}</label>
        <input
          id={id}
          type="password"
          autocomplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
      </div>
      <button type="submit">Switch</button>
      <Problem message={error} />
    </form>
  );
}
