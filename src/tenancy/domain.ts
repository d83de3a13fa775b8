/** A stage of an organization's work (Development, Production); every resource lives in one. */
export interface Environment {
  id: string;
  organizationId: string;
  name: string;
  /** Production's parent is Development; "" for a root environment. */
  parentId: string;
  /** The public application id (what the inbox widget sends): random, unique. */
  identifier: string;
  /**
   * Whether subscriber sessions must carry an HMAC of the subscriberId (docs/engine.md, "The inbox widget in
   * real time").
   */
  hmac: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * Production serves real subscribers: its inbox sessions always need the HMAC of the subscriberId,
 * or anyone who reads the public application identifier off a page could open any subscriber's
 * feed. Development keeps the switch, for trying the widget without a server.
 */
export const isProduction = (environment: Pick<Environment, "name">) => environment.name === "Production";

/** Who an API key speaks for: the key itself, and its organization and environment. */
export interface KeyOwner {
  apiKeyId: string;
  organizationId: string;
  environmentId: string;
}

/**
 * Seals an API key for storage and opens it again (the service's secret key, AES-256-GCM; see
 * src/store/secret-box.ts): the inbox widget's HMAC is keyed with the API key itself, which is
 * otherwise kept only as a hash. `open` throws when the value was sealed with another key.
 */
export interface KeySealer {
  seal(plaintext: string, boundTo: string): string;
  open(sealed: string, boundTo: string): string;
}

/** An organization's branding (Novu's): what emails and layouts read as {{branding.*}}. */
export interface Branding {
  logo?: string;
  color?: string;
  fontColor?: string;
  fontFamily?: string;
  contentBackground?: string;
  direction?: "ltr" | "rtl";
}

export interface Organization {
  id: string;
  name: string;
  branding: Branding;
  createdAt: string;
  updatedAt: string;
}
