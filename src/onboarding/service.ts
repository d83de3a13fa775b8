import { type Deps, inTransaction, onConnection } from "../deps.ts";
import { createDefaultLayout } from "../layouts/service.ts";
import { createGeneralGroup, listGroups } from "../notification-groups/service.ts";
import {
  countOrganizations,
  createEnvironment,
  createOrganizationRecord,
  issueApiKey,
  type KeySealer,
  lockOrganizations,
} from "../tenancy/service.ts";

/**
 * A new organization, set up to work: what a first start, the CLI and the tests create. It sits
 * above tenancy, notification-groups and layouts because it makes all three (an environment comes
 * with its `General` group, and one that derives from none with its default layout).
 */
export interface CreatedOrganization {
  organizationId: string;
  environments: { name: string; _id: string; apiKey: string }[];
}

/**
 * A new organization with its Development and Production environments (Production's parent is
 * Development), each with a `General` group and one API key, and Development with the default
 * layout (Production gets its copy by promotion, as Novu's does). One transaction: all or nothing.
 */
export async function createOrganization(
  deps: Deps,
  name = "My organization",
  sealer?: KeySealer,
): Promise<CreatedOrganization> {
  return inTransaction(deps, (d) => createOrganizationTree(d, name, sealer));
}

/**
 * On a database with no organization yet, creates the first one; undefined when there already is
 * one. Safe when several processes start at once on one PostgreSQL: the table lock makes the check
 * and the insert one step (SQLite's single writer does the same by itself).
 */
export async function bootstrapOrganization(
  deps: Deps,
  backend: "sqlite" | "postgres",
  sealer?: KeySealer,
): Promise<CreatedOrganization | undefined> {
  return deps.db.transaction().execute(async (trx) => {
    const trxDeps = onConnection(deps, trx);
    await lockOrganizations(trxDeps, backend);
    if ((await countOrganizations(trxDeps)) > 0) return undefined;
    return createOrganizationTree(trxDeps, "My organization", sealer);
  });
}

/** Whether the database has no organization yet: what the first start creates (bootstrapOrganization). */
export async function hasNoOrganization(deps: Deps): Promise<boolean> {
  return (await countOrganizations(deps)) === 0;
}

/**
 * A new environment of the organization, set up to work: its `General` group (the counterpart of the
 * parent environment's, when it has one) and one API key, returned this once. `parentId` names the
 * environment it derives from, or "". One that derives from none also gets the default email layout
 * (as Novu's onboarding makes it, only there: a derived environment receives the layouts of the one
 * it derives from by promotion, the default's pending change included); its creator is the
 * environment's first key. Inside the caller's transaction when there is one.
 */
export async function setUpEnvironment(
  deps: Deps,
  environment: { organizationId: string; name: string; parentId: string },
  sealer: KeySealer | undefined,
): Promise<{
  environmentId: string;
  generalGroupId: string;
  apiKey: { id: string; key: string; createdAt: string };
}> {
  const { organizationId } = environment;
  const parentGroup =
    environment.parentId === ""
      ? undefined
      : (await listGroups(deps, { environmentId: environment.parentId })).find((g) => g.name === "General");
  const environmentId = await createEnvironment(deps, environment);
  const group = await createGeneralGroup(deps, { organizationId, environmentId }, parentGroup?.id ?? "");
  if (!group) throw new Error(`the new environment ${environmentId} already had a General group`);
  const apiKey = await issueApiKey(deps, organizationId, environmentId, sealer);
  if (environment.parentId === "")
    await createDefaultLayout(deps, { organizationId, environmentId, actorId: apiKey.id });
  return { environmentId, generalGroupId: group.id, apiKey };
}

/** `sealer` keeps the keys, encrypted, for the inbox widget's HMAC (see tenancy's issueApiKey). */
async function createOrganizationTree(
  deps: Deps,
  name: string,
  sealer: KeySealer | undefined,
): Promise<CreatedOrganization> {
  const organizationId = await createOrganizationRecord(deps, name);
  const environments: CreatedOrganization["environments"] = [];
  let parentId = "";
  for (const envName of ["Development", "Production"]) {
    const made = await setUpEnvironment(deps, { organizationId, name: envName, parentId }, sealer);
    environments.push({ name: envName, _id: made.environmentId, apiKey: made.apiKey.key });
    parentId ||= made.environmentId;
  }
  return { organizationId, environments };
}
