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
  return seconds + randomHex8();
}

// Random bytes drawn 4 KiB at a time: one getrandom() call for 512 ids instead of one each (each
// trigger makes several ids; the call per id was 4% of a trigger's CPU). Each byte is used once.
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolAt = 0;

function randomHex8(): string {
  if (poolAt + 8 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolAt = 0;
  }
  const hex = pool.toString("hex", poolAt, poolAt + 8);
  poolAt += 8;
  return hex;
}

export function isObjectId(value: string): boolean {
  return OBJECT_ID.test(value);
}

export function newUuid(): string {
  return randomUUID();
}
