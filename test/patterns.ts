// The shapes the contract promises for ids and keys, in one place for every test that checks them.

/** A 24-hex ObjectId (contract part 1), as a fragment to build other patterns from. */
export const OBJECT_ID_SOURCE = "[0-9a-f]{24}";

/** A whole value that is an ObjectId. */
export const OBJECT_ID = new RegExp(`^${OBJECT_ID_SOURCE}$`);

/** The first ObjectId anywhere in a text (a URL, a body). */
export const OBJECT_ID_ANYWHERE = new RegExp(OBJECT_ID_SOURCE);

/** An API key as issued (`tid_sk_` and at least 32 URL-safe characters). */
export const API_KEY = /^tid_sk_[A-Za-z0-9_-]{32,}$/;
