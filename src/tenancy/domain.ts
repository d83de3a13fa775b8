/** A stage of an organization's work (Development, Production); every resource lives in one. */
export interface Environment {
  id: string;
  organizationId: string;
  name: string;
  /** Production's parent is Development; "" for a root environment. */
  parentId: string;
  /** The public application id (what the inbox widget sends): random, unique. */
  identifier: string;
  /** Whether subscriber sessions must carry an HMAC of the subscriberId (ENGINE.md part 7). */
  hmac: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Who an API key speaks for: the key itself, and its organization and environment. */
export interface KeyOwner {
  apiKeyId: string;
  organizationId: string;
  environmentId: string;
}
