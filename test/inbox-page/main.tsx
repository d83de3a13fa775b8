// A customer's page with Novu's current inbox (@novu/react's <Inbox />), pointed at Tidings: bundled
// by test/inbox-browser.test.ts (esbuild) and opened in Chromium. Where to connect, the subscriber and
// the hash the customer's server computed come in the URL.
//
// The component's own markup leaves its icon-only buttons without a name and greys some text below
// WCAG's contrast (axe: button-name, color-contrast), so this page does what a customer who wants an
// accessible inbox does with the component's documented hooks: a bell of its own that shows the
// unread count (`renderBell`), icons that name their buttons (`appearance.icons`), darker text
// (`appearance.elements`).
//
// `?url=apiUrl` passes `apiUrl` instead of `backendUrl`, and `?socket=none` leaves `socketUrl` out:
// the two mistakes the README warns of, each of which sends the page to Novu's cloud.
import { Inbox } from "@novu/react";
import type { ReactNode } from "react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(window.location.search);
const url = params.get("api") ?? "";
const hash = params.get("hash");

/** An icon that names the button it sits in (its only content). */
const named =
  (label: string, glyph: string) =>
  ({ class: className }: { class?: string }): ReactNode => (
    <span className={className} role="img" aria-label={label}>
      {glyph}
    </span>
  );

// `<Inbox />` of @novu/react 3.19 takes the API's address as `backendUrl` and ignores `apiUrl`
// (which only `new Novu()` and `<NovuProvider />` read).
const where: { backendUrl?: string } =
  params.get("url") === "apiUrl" ? ({ apiUrl: url } as { backendUrl?: string }) : { backendUrl: url };

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <Inbox
      applicationIdentifier={params.get("app") ?? ""}
      subscriber={params.get("subscriber") ?? ""}
      {...(hash ? { subscriberHash: hash } : {})}
      {...where}
      {...(params.get("socket") === "none" ? {} : { socketUrl: url })}
      renderBell={(unread) => (
        <span className="bell">
          <span role="img" aria-label="Notifications">
            🔔
          </span>{" "}
          <span data-testid="unread">{unread.total}</span>
        </span>
      )}
      appearance={{
        icons: {
          dots: named("More actions", "⋯"),
          cogs: named("Preferences", "⚙"),
          arrowLeft: named("Back", "←"),
          markAsRead: named("Mark as read", "✓"),
          markAsUnread: named("Mark as unread", "○"),
          markAsArchived: named("Archive", "▤"),
          markAsUnarchived: named("Unarchive", "▥"),
          clock: named("Snooze", "◷"),
          unsnooze: named("Unsnooze", "◶"),
          copy: named("Copy to other days", "⧉"),
        },
        elements: {
          notificationBody: { color: "#333" },
          notificationDate: { color: "#555" },
        },
      }}
    />,
  );
