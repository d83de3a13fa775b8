import type { ProviderChannel } from "../providers/index.ts";

/**
 * A provider's settings as Novu names them (`host, port, secure, user, password, from, senderName`
 * for SMTP...). Kept as sent; sealed at rest.
 */
export type Credentials = Record<string, unknown>;

/** An environment's configuration of one provider (docs/engine.md, "Delivery"). */
export interface Integration {
  id: string;
  organizationId: string;
  environmentId: string;
  providerId: string;
  channel: ProviderChannel;
  name: string;
  identifier: string;
  /** Undefined when the stored value cannot be opened with this process's key. */
  credentials: Credentials | undefined;
  active: boolean;
  /** Chosen by set-primary: the channel's integration while it is active. */
  primary: boolean;
  conditions: unknown[];
  createdAt: string;
  updatedAt: string;
}

/** Credential fields that are secrets: never shown back, whatever reads the integration. */
export const SECRET_FIELDS: readonly string[] = [
  "password",
  "apiKey",
  "secretKey",
  "token",
  "apiToken",
  "accessKey",
  "serviceAccount",
  "authenticationTokenKey",
];

/** What a response shows in place of a secret's value; sent back in an update, it keeps the secret. */
export const MASK = "********";

/** The credentials as a response shows them: each secret set is masked. */
export function maskedCredentials(credentials: Credentials): Credentials {
  const shown: Credentials = {};
  for (const [field, value] of Object.entries(credentials)) {
    shown[field] = SECRET_FIELDS.includes(field) && value !== "" && value !== undefined ? MASK : value;
  }
  return shown;
}
