import type { InboxListener, SessionTools } from "./service.ts";

/** What the inbox routes are handed by app.ts: who to tell when a subscriber's feed changes. */
export interface InboxRouteOptions extends Record<string, unknown> {
  onChange?: InboxListener | undefined;
}

/** What the routes of a subscriber's session (/v1/inbox) are handed by app.ts. */
export interface InboxSessionRouteOptions extends InboxRouteOptions {
  tools: SessionTools;
  /** How far ahead a notification may be snoozed (INBOX_MAX_SNOOZE_DURATION_HOURS); 0: not at all. */
  maxSnoozeDurationHours: number;
}
