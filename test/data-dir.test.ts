import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { startServer, stopServer, waitFor } from "./processes.ts";

// SQLite only, by nature: DATA_DIR is the embedded backend's folder. It holds every subscriber's data
// and the key that seals the secrets, so the service makes it its owner's alone (README, "Security"),
// whatever the umask it was started with: the folder 0700, the database, its write-ahead log and
// shared-memory file, and the generated key 0600.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-data-dir-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);
const FILES = ["tidings.db", "tidings.db-wal", "tidings.db-shm", "secret.key"];

test("a new DATA_DIR is 0700 and every file in it 0600 (the log, shared memory and generated key too); older files are tightened", async () => {
  // A umask that lets everyone read what is made, as many hosts have.
  const umask = process.umask(0o022);
  try {
    const dataDir = path.join(root, "nested", "data");
    const env = { DATA_DIR: dataDir, TIDINGS_SECRET_KEY: "" };
    const first = await startServer(env);
    try {
      // The first start created the organization: the log and the shared memory are there, in use.
      await waitFor(first, () => first.stdout().includes("More keys:"), "the banner");
      assert.equal(modeOf(dataDir), "700");
      assert.deepEqual(
        FILES.map((file) => [file, modeOf(path.join(dataDir, file))]),
        FILES.map((file) => [file, "600"]),
      );
    } finally {
      assert.equal((await stopServer(first)).code, 0);
    }

    // Files an older version left readable by everyone are made the owner's alone at the next start.
    for (const file of FILES) {
      const full = path.join(dataDir, file);
      if (fs.existsSync(full)) fs.chmodSync(full, 0o644);
    }
    const second = await startServer(env);
    try {
      for (const file of FILES) {
        const full = path.join(dataDir, file);
        if (fs.existsSync(full)) assert.equal(modeOf(full), "600", file);
      }
    } finally {
      assert.equal((await stopServer(second)).code, 0);
    }
  } finally {
    process.umask(umask);
  }
});
