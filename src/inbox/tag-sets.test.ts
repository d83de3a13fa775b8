// Migration 0017 on messages written before it: each gets the id of its list of tags, each list is
// kept once per environment, and the inbox's tag filters then find them as they find new ones.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { Migrator } from "kysely";
import { describeEachBackend, dropSchema, postgresUrl } from "../../test/backends.ts";
import { tagSetId } from "../engine/message-repository.ts";
import { postgresTypes, sqliteTypes } from "../store/migrations/column-types.ts";
import { migrationProvider } from "../store/migrations/index.ts";
import { openStore, type Store } from "../store/store.ts";
import { countInbox } from "./repository.ts";

async function withUnmigrated(backend: string, run: (store: Store, schema?: string) => Promise<void>) {
  if (backend === "sqlite") {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-migration-"));
    const store = await openStore({ dataDir });
    try {
      await run(store);
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    return;
  }
  const url = postgresUrl as string;
  const schema = `test_mig_${process.pid}_${randomBytes(3).toString("hex")}`;
  const store = await openStore({ databaseUrl: url, pgSchema: schema, pgPoolSize: 2 });
  try {
    await run(store, schema);
  } finally {
    await store.close();
    await dropSchema(url, schema);
  }
}

describeEachBackend("migration 0017 on messages written before it", (backend) => {
  test("each message gets its list's id, each list is kept once per environment", async () => {
    await withUnmigrated(backend.name, async (store, schema) => {
      const migrator = new Migrator({
        db: store.db,
        provider: migrationProvider(store.backend === "sqlite" ? sqliteTypes : postgresTypes),
        ...(schema ? { migrationTableSchema: schema } : {}),
      });
      assert.equal((await migrator.migrateTo("0015-quotas")).error, undefined);
      const lists = ['["billing","alerts"]', '["orders"]', "[]", '["naïve \\"quoted\\""]'];
      const rows = [];
      for (const [env, count] of [
        ["env-a", 8],
        ["env-b", 3],
      ] as const) {
        for (let i = 0; i < count; i++) {
          const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
          rows.push({
            id: `${env}-m${i}`,
            organization_id: "org",
            environment_id: env,
            notification_id: `${env}-n${i}`,
            job_id: `${env}-j${i}`,
            workflow_id: "wf",
            template_identifier: "wf",
            subscriber_ref: `${env}-s`,
            subscriber_id: "s",
            transaction_id: `${env}-t${i}`,
            channel: "in_app",
            content: "x",
            subject: "",
            cta: "{}",
            payload: "{}",
            provider_id: "",
            provider_message_id: "",
            status: "sent",
            seen: false,
            read: false,
            tags: lists[i % lists.length] as string,
            created_at: at,
            updated_at: at,
          });
        }
      }
      // The columns as they were at 0015 (the table's type is today's).
      await store.db.insertInto("messages").values(rows).execute();
      assert.equal((await migrator.migrateToLatest()).error, undefined);

      const written = await store.db
        .selectFrom("messages")
        .select(["id", "tags", "tag_set"])
        .orderBy("id")
        .execute();
      for (const row of written) assert.equal(row.tag_set, tagSetId(row.tags), row.id);
      const kept = await store.db
        .selectFrom("message_tag_sets")
        .selectAll()
        .orderBy("environment_id")
        .orderBy("tags")
        .execute();
      const expected = [
        ...["env-a", "env-b"].flatMap((env) =>
          lists
            .filter((tags, i) => tags !== "[]" && (env === "env-a" || i < 3))
            .map((tags) => ({ environment_id: env, id: tagSetId(tags), tags })),
        ),
      ].sort((a, b) => a.environment_id.localeCompare(b.environment_id) || (a.tags < b.tags ? -1 : 1));
      assert.deepEqual(kept, expected);

      // The filters read them: any of a group, every group, and a tag no message has.
      const counts = await countInbox(store.db, { environmentId: "env-a", subscriberRef: "env-a-s" }, [
        {},
        { tags: [["billing", "orders"]] },
        { tags: [["billing"], ["alerts"]] },
        { tags: [['naïve "quoted"']] },
        { tags: [["nothing"]] },
      ]);
      assert.deepEqual(counts, [8, 4, 2, 2, 0]);
    });
  });
});
