import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";
import type { MigrationContext } from "./context.ts";

// Frozen in time: imports nothing from the application (the context type aside).
//
// A subscriber's channel credentials (a chat webhook URL, push device tokens) are secrets: whoever has
// a Slack webhook URL can post to that channel. They were kept in the clear in `subscribers.channels`;
// from now on each channel keeps them sealed (AES-256-GCM with TIDINGS_SECRET_KEY, bound to the
// subscriber's row and the provider), beside the masked form answers show:
//
//   before: [{providerId, integrationIdentifier, credentials: {webhookUrl, deviceTokens}}]
//   after:  [{providerId, integrationIdentifier, credentials: <masked>, sealed: "v1.…"}]
//
// The masked form keeps where a webhook goes (its scheme, host and port) and hides its path and query;
// each device token is "********". This migration seals every row written before, a page at a time.
// On SQLite it has the rewritten rows' old bytes overwritten (secure_delete), so the clear values do
// not linger in the file's free space; PostgreSQL's old row versions go at the next (auto)vacuum.

const MASK = "********";
const PAGE = 500;

interface ClearChannel {
  providerId: string;
  integrationIdentifier?: string;
  credentials?: { webhookUrl?: string; deviceTokens?: string[] };
  sealed?: string;
}

function maskedWebhookUrl(url: string): string {
  if (url === "") return "";
  try {
    const { origin } = new URL(url);
    if (origin !== "null") return `${origin}/${MASK}`;
  } catch {
    // Not a URL: nothing of it is shown.
  }
  return MASK;
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes, context: MigrationContext): Promise<void> {
  if (t.dialect === "sqlite") await sql`pragma secure_delete = on`.execute(db);
  try {
    await sealAll(db, context);
  } finally {
    if (t.dialect === "sqlite") await sql`pragma secure_delete = off`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
async function sealAll(db: Kysely<any>, context: MigrationContext): Promise<void> {
  let after = "";
  for (;;) {
    const rows: { id: string; channels: string }[] = await db
      .selectFrom("subscribers")
      .select(["id", "channels"])
      .where("id", ">", after)
      .where("channels", "<>", "[]")
      .orderBy("id")
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      const channels = JSON.parse(row.channels) as ClearChannel[];
      if (channels.every((channel) => typeof channel.sealed === "string")) continue;
      const secrets = context.secrets;
      if (!secrets) {
        throw new Error(
          "subscribers' chat webhooks and device tokens must be sealed with TIDINGS_SECRET_KEY: " +
            "start the service (or the CLI) with the key it uses",
        );
      }
      const sealed = channels.map((channel) => {
        if (typeof channel.sealed === "string") return channel;
        const credentials = {
          webhookUrl: channel.credentials?.webhookUrl ?? "",
          deviceTokens: channel.credentials?.deviceTokens ?? [],
        };
        return {
          providerId: channel.providerId,
          integrationIdentifier: channel.integrationIdentifier ?? "",
          credentials: {
            webhookUrl: maskedWebhookUrl(credentials.webhookUrl),
            deviceTokens: credentials.deviceTokens.map(() => MASK),
          },
          sealed: secrets.seal(
            JSON.stringify(credentials),
            `subscriber-channel:${row.id}:${channel.providerId}`,
          ),
        };
      });
      await db
        .updateTable("subscribers")
        .set({ channels: JSON.stringify(sealed) })
        .where("id", "=", row.id)
        .execute();
    }
    const last = rows.at(-1);
    if (!last || rows.length < PAGE) return;
    after = last.id;
  }
}
