import type { InboxListener, SessionTools } from "../inbox/service.ts";

/** What the widget routes are handed by app.ts. */
export interface WidgetRouteOptions extends Record<string, unknown> {
  tools: SessionTools;
  /** Told of every change to a subscriber's feed, after its commit (the sockets). */
  onChange?: InboxListener | undefined;
  /** Told of each usage event the widget logs (metrics). */
  onUsage?: ((name: string) => void) | undefined;
}
