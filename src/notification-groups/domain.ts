/** A named set of workflows within one environment. */
export interface NotificationGroup {
  id: string;
  organizationId: string;
  environmentId: string;
  name: string;
  /** The group this one is the counterpart of in another environment; "" when none. */
  parentId: string;
  createdAt: string;
  updatedAt: string;
}
