import type { Message } from "../engine/domain.ts";
import type { WorkflowSummary } from "../workflows/service.ts";

export type { DataCondition, DataValue, NotificationFilter } from "./filters.ts";

/**
 * A notification of Novu's current inbox: one of the subscriber's in-app messages, with its workflow
 * as it is now (undefined once the workflow is purged).
 */
export interface InboxNotification {
  message: Message;
  workflow: WorkflowSummary | undefined;
}

/** What a subscriber may do to one of its notifications, and to many at once. */
export type NotificationMark = "read" | "unread" | "archive" | "unarchive";
export type BulkAction = "read" | "archive" | "archive-read" | "delete";
export type ActionType = "primary" | "secondary";
