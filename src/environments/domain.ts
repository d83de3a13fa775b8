import type { Layout } from "../layouts/domain.ts";
import type { NotificationGroup } from "../notification-groups/domain.ts";
import type { Environment } from "../tenancy/domain.ts";
import type { Workflow } from "../workflows/domain.ts";

/**
 * What promoting from one environment to another (Development to Production) would do: each
 * workflow, group and email layout of the source that the target lacks (added) or has otherwise
 * (modified), and each copy in the target whose source is gone (deleted). A copy is a target record whose
 * `parentId` names its source; target records of their own (no parentId) are never touched.
 */
export type ChangeAction = "added" | "modified" | "deleted";

export interface WorkflowChange {
  kind: "workflow";
  action: ChangeAction;
  /** The source workflow's id (a deleted one's too): the change's id. */
  sourceId: string;
  /** The source workflow; absent when deleted. */
  source?: Workflow;
  /** The copy in the target; absent when added. */
  target?: Workflow;
  /** Modified: the fields that differ (`notificationGroup` for the group). */
  fields: string[];
}

export interface GroupChange {
  kind: "notification_group";
  action: ChangeAction;
  sourceId: string;
  source?: NotificationGroup;
  target?: NotificationGroup;
  fields: string[];
}

/** An email layout: modified compares what a publish copies (identifier, name, description, content, variables, isDefault). */
export interface LayoutChange {
  kind: "layout";
  action: ChangeAction;
  sourceId: string;
  source?: Layout;
  target?: Layout;
  fields: string[];
}

export type Change = WorkflowChange | GroupChange | LayoutChange;

export interface Promotion {
  source: Environment;
  target: Environment;
  /** Workflow changes in the source's order (oldest first), then the deleted. */
  workflows: WorkflowChange[];
  groups: GroupChange[];
  /** Layout changes in the source's order (oldest first), then the deleted. */
  layouts: LayoutChange[];
  /** How many of each the target already has as the source has them. */
  unchanged: { workflows: number; groups: number; layouts: number };
}

/** What publishing did (or, in a dry run, would do) with one change. */
export interface Published {
  change: Change;
  outcome: "created" | "updated" | "deleted" | "skipped";
  /** Why it was skipped. */
  reason?: string;
  /** The copy in the target (made, updated or deleted). */
  targetId?: string;
}

export interface PublishResult {
  promotion: Promotion;
  published: Published[];
  dryRun: boolean;
}
