// A customer's page with Novu's own inbox component, unchanged, pointed at Tidings: bundled by
// test/widget-browser.test.ts (esbuild) and opened in Chromium. Where to connect comes in the URL.
import { NotificationBell, NovuProvider, PopoverNotificationCenter } from "@novu/notification-center";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(window.location.search);
const backendUrl = params.get("api") ?? "";
const hash = params.get("hash");

function Inbox() {
  return (
    <NovuProvider
      backendUrl={backendUrl}
      socketUrl={backendUrl}
      applicationIdentifier={params.get("app") ?? ""}
      subscriberId={params.get("subscriber") ?? ""}
      {...(hash ? { subscriberHash: hash } : {})}
    >
      <PopoverNotificationCenter colorScheme="light">
        {({ unseenCount }) => (
          <span data-testid="bell" data-unseen={String(unseenCount ?? 0)}>
            <NotificationBell unseenCount={unseenCount ?? 0} />
          </span>
        )}
      </PopoverNotificationCenter>
    </NovuProvider>
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<Inbox />);
