import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { decodeSecretKey } from "../config.ts";
import { DATA_FILE_MODE, makeDataDir, tightenFile } from "./file-modes.ts";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals integration credentials at rest: AES-256-GCM with a fresh 96-bit nonce per seal, the row's
 * id as additional data (a sealed value copied onto another integration does not open there), and
 * a version prefix so a later key or scheme can be told apart. Sealed text: `v1.<iv>.<tag>.<data>`
 * in base64url.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new RangeError("an AES-256 key is 32 bytes");
    this.#key = Buffer.from(key);
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(boundTo, "utf8"));
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), data]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  }

  /** The plaintext; throws when the value was sealed with another key, for another row, or altered. */
  open(sealed: string, boundTo: string): string {
    const [version, iv, tag, data] = sealed.split(".");
    if (version !== VERSION || iv === undefined || tag === undefined || data === undefined) {
      throw new Error("not a value sealed by this version");
    }
    const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(iv, "base64url"), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(boundTo, "utf8"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  }

  /** Never shows the key, whatever logs or inspects the box. */
  toJSON(): string {
    return "[SecretBox]";
  }
}

export const SECRET_KEY_FILE = "secret.key";

export class MissingSecretKeyError extends Error {
  override name = "MissingSecretKeyError";
}

/**
 * The key that seals credentials: TIDINGS_SECRET_KEY when set. Otherwise, for the embedded SQLite
 * default, the key in DATA_DIR/secret.key, generated there (readable by its owner only) the first
 * time. With DATABASE_URL the key must be set: processes on several hosts must share it, and a key
 * made up by one of them would lock the others out of the credentials.
 */
export function resolveSecretKey(options: {
  configured: Buffer | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
}): { key: Buffer; source: "environment" | "generated" | "file" } {
  if (options.configured) return { key: options.configured, source: "environment" };
  if (options.databaseUrl !== undefined) {
    throw new MissingSecretKeyError(
      "TIDINGS_SECRET_KEY must be set when DATABASE_URL is: it encrypts integration credentials, " +
        'and every process must use the same one (generate it once with "openssl rand -base64 32")',
    );
  }
  const file = path.join(options.dataDir, SECRET_KEY_FILE);
  makeDataDir(options.dataDir);
  try {
    // "wx": only the first process creates it; a second one reads what the first wrote.
    fs.writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: DATA_FILE_MODE });
    return { key: readKeyFile(file), source: "generated" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    tightenFile(file);
    return { key: readKeyFile(file), source: "file" };
  }
}

function readKeyFile(file: string): Buffer {
  return decodeSecretKey(fs.readFileSync(file, "utf8"), file);
}
