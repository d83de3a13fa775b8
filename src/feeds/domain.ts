/** A feed (Novu's): a named tab of the in-app feed, which in-app steps name (`_feedId`). */
export interface Feed {
  id: string;
  organizationId: string;
  environmentId: string;
  identifier: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}
