import { randomBytes, randomUUID } from "node:crypto";

const OBJECT_ID = /^[0-9a-f]{24}$/;

/**
 * A 24-character lowercase hex id in MongoDB ObjectId layout: 4 bytes of seconds since the epoch,
 * then 8 random bytes. Novu clients that check for "a mongodb id" accept it, and ids sort roughly
 * by creation time.
 */
export function newObjectId(now: number = Date.now()): string {
  const seconds = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, "0");
  return seconds + randomBytes(8).toString("hex");
}

export function isObjectId(value: string): boolean {
  return OBJECT_ID.test(value);
}

export function newUuid(): string {
  return randomUUID();
}
