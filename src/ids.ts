import { randomBytes, randomUUID } from "node:crypto";

const OBJECT_ID = /^[0-9a-f]{24}$/;

/**
 * A 24-character lowercase hex id in MongoDB's ObjectId layout: 4 bytes of seconds since the epoch,
 * 5 random bytes drawn once per process, and a 3-byte counter that starts at a random value. Novu
 * clients that check for "a mongodb id" accept it, and ids sort by creation time.
 *
 * Why a counter rather than random bytes: every table's primary key and most of their indexes lead
 * with an id, and ids that are consecutive within a second append to the end of each B-tree. With
 * random low bytes, the rows of one SQLite commit landed on as many different index pages as there
 * were rows, and each of those pages was written to the log whole. Ids are names, never secrets:
 * every read is scoped by environment and subscriber, and credentials come from `randomBytes` of
 * their own.
 */
export function newObjectId(now: number = Date.now()): string {
  const seconds = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, "0");
  counter = (counter + 1) & 0xffffff;
  return seconds + PROCESS_PART + counter.toString(16).padStart(6, "0");
}

/** Drawn once per process, so two processes (or a restarted one) never make the same id. */
const PROCESS_PART = randomBytes(5).toString("hex");
let counter = randomBytes(3).readUIntBE(0, 3);

export function isObjectId(value: string): boolean {
  return OBJECT_ID.test(value);
}

export function newUuid(): string {
  return randomUUID();
}

/**
 * A transactionId for a trigger that names none: a UUID of version 7 (RFC 9562), whose first 48 bits
 * are the time in milliseconds, so that the environment's transactionId index takes new ids at its
 * end, as the ids do (see newObjectId). With random (version 4) ids each new trigger landed on an
 * index page of its own, which each SQLite commit wrote to the log whole: 4 KB more of log a
 * trigger. Written here because Node 20 has no version 7; its random bits are randomUUID's, which
 * takes them from a cached pool (the `uuid` package's v7 draws 16 fresh bytes on every call: 2.7–3.1 µs
 * a call on the development machine, against 0.15 µs for randomUUID).
 */
export function newTransactionId(now: number = Date.now()): string {
  // randomUUID: xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx; its version digit becomes 7 and the time
  // replaces its first twelve digits. The variant (V) and 74 random bits stay.
  const random = randomUUID();
  const time = now.toString(16).padStart(12, "0");
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
