import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, forgetKey, ok, storedKey, storeKey } from "./api.ts";
import { Activity, NotificationView } from "./views/activity.tsx";
import { Groups } from "./views/groups.tsx";
import { Integrations } from "./views/integrations.tsx";
import { Subscribers, SubscriberView } from "./views/subscribers.tsx";
import { WorkflowEditor, Workflows } from "./views/workflows.tsx";
import "./style.css";

/** The view named by the address's hash (#/workflows, #/subscribers/abc...): no key ever goes there. */
function useRoute(): string[] {
  const read = () => (location.hash.replace(/^#\/?/, "") || "workflows").split("/").map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

const SECTIONS = [
  ["workflows", "Workflows"],
  ["groups", "Groups"],
  ["subscribers", "Subscribers"],
  ["activity", "Activity"],
  ["integrations", "Integrations"],
] as const;

function SignIn({ onSignedIn }: { onSignedIn: (environment: string) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    storeKey(key.trim());
    try {
      const environment = await ok(api.GET("/v1/environments/me"));
      onSignedIn(environment.data.name);
    } catch (failure) {
      forgetKey();
      setError(
        failure instanceof ApiError && failure.status === 401
          ? "That API key was not accepted."
          : `Could not sign in: ${(failure as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="sign-in">
      <h1>Tidings</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="text"
          autocomplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && <p role="alert">{error}</p>}
      </form>
    </main>
  );
}

function App() {
  const [environment, setEnvironment] = useState<string | null>(null);
  const [checking, setChecking] = useState(storedKey() !== null);
  const route = useRoute();

  useEffect(() => {
    if (!storedKey()) return;
    ok(api.GET("/v1/environments/me"))
      .then((env) => setEnvironment(env.data.name))
      .catch(() => forgetKey())
      .finally(() => setChecking(false));
  }, []);

  if (checking) return <p aria-live="polite">Loading…</p>;
  if (environment === null) return <SignIn onSignedIn={setEnvironment} />;

  const [section = "workflows", id] = route;
  let view = <Workflows />;
  if (section === "workflows" && id) view = <WorkflowEditor id={id === "new" ? null : id} />;
  else if (section === "groups") view = <Groups />;
  else if (section === "subscribers") view = id ? <SubscriberView id={id} /> : <Subscribers />;
  else if (section === "activity") view = id ? <NotificationView id={id} /> : <Activity />;
  else if (section === "integrations") view = <Integrations />;

  return (
    <>
      <header>
        <span class="brand">Tidings</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map(([path, label]) => (
              <li key={path}>
                <a href={`#/${path}`} aria-current={section === path ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="environment">Environment: {environment}</span>
        <button
          type="button"
          onClick={() => {
            forgetKey();
            setEnvironment(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main>{view}</main>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
