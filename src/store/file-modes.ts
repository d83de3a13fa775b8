import fs from "node:fs";

/**
 * DATA_DIR holds every subscriber's data, and the key that seals the secrets: its owner alone may
 * read it. A folder Tidings makes is 0700, a file 0600.
 */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/** Makes the folder (and its parents) when missing, its owner's alone; one that exists is left as it is. */
export function makeDataDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
}

/**
 * Makes a file made earlier (by an older version, another umask, or by hand) its owner's alone. A
 * file that is not there is nothing to do; one that belongs to another user cannot be changed by
 * this one and is left as it is (its owner set it so).
 */
export function tightenFile(file: string): void {
  try {
    fs.chmodSync(file, DATA_FILE_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "EPERM") throw error;
  }
}
