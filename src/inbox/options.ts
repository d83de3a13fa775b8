import type { InboxListener } from "./service.ts";

/** What the inbox routes are handed by app.ts: who to tell when a subscriber's feed changes. */
export interface InboxRouteOptions extends Record<string, unknown> {
  onChange?: InboxListener | undefined;
}
