/**
 * Who is acting, and where. Every service call takes one, so no operation can forget whose data it
 * touches: the ids come from the verified API key, never from the request body.
 */
export interface Tenant {
  readonly organizationId: string;
  readonly environmentId: string;
  /** The API key's id: recorded as _creatorId / deletedBy, so an audit can say which key did what. */
  readonly actorId: string;
}
