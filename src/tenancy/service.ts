import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { ApiError, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import type { Database } from "../store/schema.ts";
import { isUniqueViolation } from "../store/store.ts";
import { generateApiKey, hashApiKey, keyHint } from "./api-keys.ts";
import {
  type Branding,
  type Environment,
  isProduction,
  type KeyOwner,
  type KeySealer,
  type Organization,
} from "./domain.ts";
import * as tenancy from "./repository.ts";
import type { Tenant } from "./tenant.ts";

export type { KeyOwner, KeySealer } from "./domain.ts";

/** A new organization row; its environments come with createEnvironment. */
export async function createOrganizationRecord(deps: Deps, name: string): Promise<string> {
  const id = newObjectId();
  await tenancy.insertOrganization(deps.db, id, name, isoNow(deps.clock));
  return id;
}

/**
 * A new environment of the organization; `parentId` names the environment it descends from, or "".
 * It gets its public application identifier, and HMAC for subscriber sessions on in Production
 * (ours, docs/engine.md, "The inbox widget in real time": Production refuses sessions without an HMAC from
 * the start).
 */
export async function createEnvironment(
  deps: Deps,
  environment: { organizationId: string; name: string; parentId: string },
): Promise<string> {
  const id = newObjectId();
  await tenancy.insertEnvironment(deps.db, {
    id,
    ...environment,
    identifier: newApplicationIdentifier(),
    hmac: environment.name === "Production",
    now: isoNow(deps.clock),
  });
  return id;
}

/** How many organizations the database holds. */
export function countOrganizations(deps: Deps): Promise<number> {
  return tenancy.countOrganizations(deps.db);
}

/**
 * Holds the organizations table against other writers until the transaction `deps.db` ends, so a
 * check-then-create is one step across processes (PostgreSQL; SQLite's single writer already is).
 */
export async function lockOrganizations(deps: Deps, backend: "sqlite" | "postgres"): Promise<void> {
  if (backend === "postgres")
    await sql`lock table organizations in share row exclusive mode`.execute(deps.db);
}

/**
 * A new key for the environment; the plaintext is returned once and stored only as a hash, and,
 * given a sealer, encrypted for the inbox widget's HMAC (never returned again by any route).
 */
export async function issueApiKey(
  deps: Deps,
  organizationId: string,
  environmentId: string,
  sealer?: KeySealer,
) {
  const key = generateApiKey();
  const id = newObjectId();
  const now = isoNow(deps.clock);
  await tenancy.insertApiKey(deps.db, {
    id,
    organizationId,
    environmentId,
    hash: hashApiKey(key),
    hint: keyHint(key),
    sealed: sealer ? sealer.seal(key, id) : null,
    now,
  });
  return { id, key, createdAt: now };
}

/** A new key for an environment named by id; undefined when there is no such environment. */
export async function createApiKey(deps: Deps, environmentId: string, sealer?: KeySealer) {
  const env = await tenancy.findEnvironment(deps.db, environmentId);
  if (!env) return undefined;
  const { id, key, createdAt } = await issueApiKey(deps, env.organization_id, env.id, sealer);
  return {
    id,
    apiKey: key,
    environmentId: env.id,
    environment: env.name,
    organizationId: env.organization_id,
    createdAt,
  };
}

/** The live (unrevoked) key with this SHA-256 hash, with the tenant it belongs to. */
export function findKeyOwner(db: Kysely<Database>, hash: string): Promise<KeyOwner | undefined> {
  return tenancy.findKeyOwner(db, hash);
}

/** Every environment (of one organization, when named): the CLI's listing. */
export function listAllEnvironments(deps: Deps, organizationId?: string) {
  return tenancy.listEnvironments(deps.db, organizationId);
}

export function listApiKeys(deps: Deps, environmentId?: string) {
  return tenancy.listApiKeys(deps.db, environmentId);
}

/** Revokes a live key from now on; false when there is no such key or it was already revoked. */
export function revokeApiKey(deps: Deps, id: string): Promise<boolean> {
  return tenancy.revokeApiKey(deps.db, id, isoNow(deps.clock));
}

/** A public application id: 72 random bits, URL-safe (it travels in the inbox widget's requests). */
export function newApplicationIdentifier(): string {
  return randomBytes(9).toString("base64url");
}

function environmentNotFound(id: string) {
  return notFound(`Environment ${id} was not found`);
}

/**
 * Novu's inbound-parse check (`GET /v1/inbound-parse/mx/status`): whether the MX record of the
 * environment's inbound-parse domain points at the mail server that receives replies. Tidings
 * receives no email, so no environment has such a domain, and Novu answers `false` for one without.
 */
export async function mxRecordStatus(deps: Deps, tenant: Tenant): Promise<{ mxRecordConfigured: boolean }> {
  await getCurrentEnvironment(deps, tenant);
  return { mxRecordConfigured: false };
}

/** The API key's environment. */
export async function getCurrentEnvironment(deps: Deps, tenant: Tenant): Promise<Environment> {
  const environment = await tenancy.findOrganizationEnvironment(
    deps.db,
    tenant.organizationId,
    tenant.environmentId,
  );
  if (!environment) throw environmentNotFound(tenant.environmentId);
  return environment;
}

/** Turns HMAC for the environment's subscriber sessions on or off; Production keeps it on (403). */
export async function setEnvironmentHmac(deps: Deps, tenant: Tenant, hmac: boolean): Promise<Environment> {
  if (!hmac && isProduction(await getCurrentEnvironment(deps, tenant))) {
    throw new ApiError(
      403,
      "HMAC cannot be turned off in Production: its inbox sessions must carry the HMAC of the subscriberId, " +
        "computed on your server, so that nobody can open another subscriber's feed; " +
        "Development can turn it off for trying the widget",
    );
  }
  const environment = await tenancy.setEnvironmentHmac(
    deps.db,
    tenant.environmentId,
    hmac,
    isoNow(deps.clock),
  );
  if (!environment) throw environmentNotFound(tenant.environmentId);
  return environment;
}

/** The organization's environments (without keys). */
export async function listEnvironments(deps: Deps, tenant: Tenant): Promise<Environment[]> {
  return tenancy.listOrganizationEnvironments(deps.db, tenant.organizationId);
}

/** The environment's live keys, without the keys themselves (only their ids and last characters). */
export async function listEnvironmentKeys(deps: Deps, tenant: Tenant) {
  return tenancy.listLiveKeys(deps.db, tenant.environmentId);
}

/**
 * A new key for the caller's environment, returned in plaintext this once, and the calling key
 * revoked in the same transaction: its next request is refused. Other keys of the environment stay.
 */
export async function regenerateApiKey(deps: Deps, tenant: Tenant, sealer?: KeySealer) {
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const { id, key } = await issueApiKey(d, tenant.organizationId, tenant.environmentId, sealer);
    await tenancy.revokeApiKey(d.db, tenant.actorId, now);
    return {
      id,
      key,
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      createdAt: now,
    };
  });
}

/** The environment whose public application identifier this is, with its organization's name. */
export function findEnvironmentByIdentifier(deps: Deps, identifier: string) {
  return tenancy.findEnvironmentByIdentifier(deps.db, identifier);
}

/**
 * The environment's live API keys in plaintext, for checking a widget session's HMAC: those stored
 * sealed that this sealer opens. `unsealable` counts the live keys it cannot (made before sealing,
 * or without the secret key, or sealed with another one).
 */
export async function openEnvironmentKeys(
  deps: Deps,
  environmentId: string,
  sealer: KeySealer | undefined,
): Promise<{ keys: string[]; unsealable: number }> {
  const rows = await tenancy.listSealedKeys(deps.db, environmentId);
  const keys: string[] = [];
  for (const row of rows) {
    if (row.sealed === null || !sealer) continue;
    try {
      keys.push(sealer.open(row.sealed, row.id));
    } catch {
      // Sealed with another secret key: cannot be used, counted below.
    }
  }
  return { keys, unsealable: rows.length - keys.length };
}

/** The tenant's organization: its id and name. */
export async function getOrganization(
  deps: Deps,
  tenant: Pick<Tenant, "organizationId">,
): Promise<Organization> {
  const organization = await tenancy.findOrganization(deps.db, tenant.organizationId);
  if (!organization) throw notFound(`Organization ${tenant.organizationId} was not found`);
  return organization;
}

/** Changes the key's organization's name, or its branding (as a whole). */
export async function updateOrganization(
  deps: Deps,
  tenant: Pick<Tenant, "organizationId">,
  changes: { name?: string; branding?: Branding },
): Promise<Organization> {
  const now = isoNow(deps.clock);
  if (!(await tenancy.updateOrganization(deps.db, tenant.organizationId, changes, now)))
    throw notFound(`Organization ${tenant.organizationId} was not found`);
  return getOrganization(deps, tenant);
}

/** What templates read as {{branding.*}}: the organization's branding, Novu's colour when it has none. */
export async function brandingForTemplates(
  deps: Deps,
  organizationId: string,
): Promise<Record<string, unknown>> {
  const organization = await tenancy.findOrganization(deps.db, organizationId);
  const branding = organization?.branding ?? {};
  return { ...branding, color: branding.color ?? "#f47373" };
}

/** An environment of the tenant's organization; 404 for one of another organization, as for none. */
export async function getEnvironment(deps: Deps, tenant: Pick<Tenant, "organizationId">, id: string) {
  const environment = await tenancy.findOrganizationEnvironment(deps.db, tenant.organizationId, id);
  if (!environment) throw environmentNotFound(id);
  return environment;
}

/**
 * Renames an environment of the organization, gives it another parent, another public identifier
 * (409 when another environment has it) or turns its HMAC on or off (Production keeps it on: 403).
 */
export async function updateEnvironmentRecord(
  deps: Deps,
  tenant: Pick<Tenant, "organizationId">,
  id: string,
  change: tenancy.EnvironmentChange,
): Promise<Environment> {
  if (change.hmac === false && isProduction(await getEnvironment(deps, tenant, id))) {
    throw new ApiError(
      403,
      "HMAC cannot be turned off in Production: its inbox sessions must carry the HMAC of the subscriberId",
    );
  }
  let environment: Environment | undefined;
  try {
    environment = await tenancy.updateEnvironment(
      deps.db,
      tenant.organizationId,
      id,
      change,
      isoNow(deps.clock),
    );
  } catch (error) {
    if (change.identifier !== undefined && isUniqueViolation(error))
      throw new ApiError(409, "Another environment has this identifier");
    throw error;
  }
  if (!environment) throw environmentNotFound(id);
  return environment;
}

/** Removes an environment of the organization and its keys; false when there is none. */
export function deleteEnvironmentRecord(deps: Deps, tenant: Pick<Tenant, "organizationId">, id: string) {
  return tenancy.deleteEnvironment(deps.db, tenant.organizationId, id);
}

/**
 * Holds the environment against other writers of the same kind until the transaction `deps.db`
 * ends (PostgreSQL: its row locked; SQLite's single writer already is alone).
 */
export function lockEnvironment(deps: Deps, id: string): Promise<void> {
  return tenancy.lockEnvironment(deps.db, id);
}

/** The URL of the environment's code-first workflow app (its bridge); "" when none is registered. */
export async function getBridgeUrl(deps: Deps, environmentId: string): Promise<string> {
  return (await tenancy.findBridgeUrl(deps.db, environmentId)) ?? "";
}

export async function setBridgeUrl(deps: Deps, environmentId: string, url: string): Promise<void> {
  await tenancy.setBridgeUrl(deps.db, environmentId, url, isoNow(deps.clock));
}

/**
 * The environment's secret API key in plaintext, which signs the calls to its bridge (the app's
 * `serve` checks them with the same key): its newest live key this sealer opens; undefined when none.
 */
export async function environmentSecretKey(
  deps: Deps,
  environmentId: string,
  sealer: KeySealer | undefined,
): Promise<string | undefined> {
  if (!sealer) return undefined;
  for (const row of await tenancy.listSealedKeys(deps.db, environmentId)) {
    if (row.sealed === null) continue;
    try {
      return sealer.open(row.sealed, row.id);
    } catch {
      // Sealed with another secret key: the next one, perhaps.
    }
  }
  return undefined;
}
