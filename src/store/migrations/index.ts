import type { Kysely, Migration, MigrationProvider } from "kysely";
import * as initial from "./0001-initial.ts";
import * as workflowSearch from "./0002-workflow-search.ts";
import * as subscribers from "./0003-subscribers.ts";
import * as queue from "./0004-queue.ts";
import * as engine from "./0005-engine.ts";
import * as queueWorkers from "./0006-queue-workers.ts";
import * as integrations from "./0007-integrations.ts";
import * as digest from "./0008-digest.ts";
import * as sealedKeys from "./0009-sealed-keys.ts";
import * as jobTransactionIndex from "./0010-job-transaction-index.ts";
import * as inbox from "./0011-inbox.ts";
import * as inboxPreferences from "./0012-inbox-preferences.ts";
import * as productionHmac from "./0013-production-hmac.ts";
import * as sealedSubscriberChannels from "./0014-sealed-subscriber-channels.ts";
import * as quotas from "./0015-quotas.ts";
import * as topicsV2 from "./0016-topics-v2.ts";
import * as inboxTagSets from "./0017-inbox-tag-sets.ts";
import * as subscriberEmail from "./0018-subscriber-email.ts";
import * as tenants from "./0019-tenants.ts";
import * as codeWorkflows from "./0020-code-workflows.ts";
import * as layouts from "./0021-layouts.ts";
import * as workflowOverrides from "./0022-workflow-overrides.ts";
import * as organizationBranding from "./0023-organization-branding.ts";
import * as feeds from "./0024-feeds.ts";
import * as messageFeed from "./0025-message-feed.ts";
import * as transactionThroughTriggers from "./0026-transaction-through-triggers.ts";
import * as openJobsUpsert from "./0027-open-jobs-upsert.ts";
import type { ColumnTypes } from "./column-types.ts";
import type { MigrationContext } from "./context.ts";

export type { MigrationContext } from "./context.ts";

// biome-ignore lint/suspicious/noExplicitAny: migrations see the database as it was, untyped.
type Step = { up(db: Kysely<any>, types: ColumnTypes, context: MigrationContext): Promise<void> };

// Listed in code, not read from a folder, so a bundled or compiled build carries them along.
const steps: Record<string, Step> = {
  "0001-initial": initial,
  "0002-workflow-search": workflowSearch,
  "0003-subscribers": subscribers,
  "0004-queue": queue,
  "0005-engine": engine,
  "0006-queue-workers": queueWorkers,
  "0007-integrations": integrations,
  "0008-digest": digest,
  "0009-sealed-keys": sealedKeys,
  "0010-job-transaction-index": jobTransactionIndex,
  "0011-inbox": inbox,
  "0012-inbox-preferences": inboxPreferences,
  "0013-production-hmac": productionHmac,
  "0014-sealed-subscriber-channels": sealedSubscriberChannels,
  "0015-quotas": quotas,
  "0016-topics-v2": topicsV2,
  "0017-inbox-tag-sets": inboxTagSets,
  "0018-subscriber-email": subscriberEmail,
  "0019-tenants": tenants,
  "0020-code-workflows": codeWorkflows,
  "0021-layouts": layouts,
  "0022-workflow-overrides": workflowOverrides,
  "0023-organization-branding": organizationBranding,
  "0024-feeds": feeds,
  "0025-message-feed": messageFeed,
  "0026-transaction-through-triggers": transactionThroughTriggers,
  "0027-open-jobs-upsert": openJobsUpsert,
};

export function migrationProvider(types: ColumnTypes, context: MigrationContext = {}): MigrationProvider {
  return {
    async getMigrations() {
      const migrations: Record<string, Migration> = {};
      for (const [name, step] of Object.entries(steps)) {
        // biome-ignore lint/suspicious/noExplicitAny: the migrator hands over an untyped Kysely.
        migrations[name] = { up: (db: Kysely<any>) => step.up(db, types, context) };
      }
      return migrations;
    },
  };
}
