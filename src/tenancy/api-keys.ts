import crypto, { createHash, randomBytes } from "node:crypto";

export const KEY_PREFIX = "tid_sk_";

/**
 * A new secret key: the recognisable prefix (so people and secret scanners spot a leaked key), then
 * 192 random bits in base64url. Only its SHA-256 hash is ever stored.
 */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString("base64url");
}

// crypto.hash (Node 20.12+) is the one-shot form: about a quarter of createHash's cost, and this runs
// on every authenticated request.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string }).hash;

export function hashApiKey(key: string): string {
  return oneShot ? oneShot("sha256", key, "hex") : createHash("sha256").update(key, "utf8").digest("hex");
}

/** The key's last four characters: enough to tell keys apart in a listing, nothing to guess with. */
export function keyHint(key: string): string {
  return key.slice(-4);
}

/** How a listing shows a key: the prefix, a mask, and its hint when it has one. */
export function maskedKey(hint: string): string {
  return `${KEY_PREFIX}****${hint}`;
}
