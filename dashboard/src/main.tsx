import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, forgetKey, forgetKeys, ok, rememberKey, storedKey, storeKey } from "./api.ts";
import { Activity, NotificationView } from "./views/activity.tsx";
import { Groups } from "./views/groups.tsx";
import { Integrations } from "./views/integrations.tsx";
import { Layouts, LayoutView } from "./views/layouts.tsx";
import { type CurrentEnvironment, Settings } from "./views/settings.tsx";
import { Subscribers, SubscriberView } from "./views/subscribers.tsx";
import { Topics, TopicView } from "./views/topics.tsx";
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
  ["layouts", "Layouts"],
  ["subscribers", "Subscribers"],
  ["topics", "Topics"],
  ["activity", "Activity"],
  ["integrations", "Integrations"],
  ["settings", "Settings"],
] as const;

/** The environment the key opens, remembered with its key for switching back later. */
async function currentEnvironment(): Promise<CurrentEnvironment> {
  const { data } = await ok(api.GET("/v1/environments/me"));
  const key = storedKey();
  if (key) rememberKey(data._id, key);
  return { _id: data._id, name: data.name };
}

function SignIn({ onSignedIn }: { onSignedIn: (environment: CurrentEnvironment) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    storeKey(key.trim());
    try {
      onSignedIn(await currentEnvironment());
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
  const [environment, setEnvironment] = useState<CurrentEnvironment | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const [checking, setChecking] = useState(storedKey() !== null);
  const route = useRoute();

  // Any change of view closes the menu (back and forward too); a link followed from the menu closes
  // it in its own click, before the new view renders, so the view never shows under an open menu.
  useEffect(() => setMenuOpen(false), [route.join("/")]);
  useEffect(() => {
    if (!storedKey()) return;
    currentEnvironment()
      .then(setEnvironment)
      .catch(() => forgetKey())
      .finally(() => setChecking(false));
  }, []);

  if (checking) return <p aria-live="polite">Loading…</p>;
  if (environment === null) return <SignIn onSignedIn={setEnvironment} />;

  const [section = "workflows", id] = route;
  let view = <Workflows />;
  if (section === "workflows" && id) view = <WorkflowEditor id={id === "new" ? null : id} />;
  else if (section === "groups") view = <Groups />;
  else if (section === "layouts") view = id ? <LayoutView id={id} /> : <Layouts />;
  else if (section === "subscribers") view = id ? <SubscriberView id={id} /> : <Subscribers />;
  else if (section === "activity") view = id ? <NotificationView id={id} /> : <Activity />;
  else if (section === "integrations") view = <Integrations />;
  else if (section === "topics") view = id ? <TopicView topicKey={id} /> : <Topics />;
  else if (section === "settings") view = <Settings current={environment} onSwitch={setEnvironment} />;

  return (
    <>
      <header>
        <span class="brand">Tidings</span>
        <button
          type="button"
          class="menu-button"
          aria-expanded={menuOpen}
          aria-controls="sections"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav aria-label="Sections" id="sections" data-open={String(menuOpen)}>
          <ul>
            {SECTIONS.map(([path, label]) => (
              <li key={path}>
                <a
                  href={`#/${path}`}
                  aria-current={section === path ? "page" : undefined}
                  onClick={() => setMenuOpen(false)}
                >
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="environment">
          Environment: <a href="#/settings">{environment.name}</a>
        </span>
        <button
          type="button"
          onClick={() => {
            forgetKey();
            forgetKeys();
            setEnvironment(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main key={environment._id}>{view}</main>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
