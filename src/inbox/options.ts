import type { InboxListener, SessionTools } from "./service.ts";

/** What the inbox routes are handed by app.ts: who to tell when a subscriber's feed changes. */
export interface InboxRouteOptions extends Record<string, unknown> {
  onChange?: InboxListener | undefined;
}

/**
 * What the routes that snooze are handed by app.ts: the API key's over a subscriber's notifications
 * (/v2/subscribers/:subscriberId/notifications), and, with the session tools, the session's.
 */
export interface SnoozingRouteOptions extends InboxRouteOptions {
  /** How far ahead a notification may be snoozed (INBOX_MAX_SNOOZE_DURATION_HOURS); 0: not at all. */
  maxSnoozeDurationHours: number;
}

/** What the routes of a subscriber's session (/v1/inbox) are handed by app.ts. */
export interface InboxSessionRouteOptions extends SnoozingRouteOptions {
  tools: SessionTools;
}
