import type { Deps } from "../deps.ts";
import { conflict, invalidField, mention, notFound } from "../errors.ts";
import { createOrganization as createOrganizationTree } from "../onboarding/service.ts";
import type { Branding, KeySealer, Organization } from "../tenancy/domain.ts";
import { getOrganization, updateOrganization } from "../tenancy/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";

/**
 * Novu's organization routes over Tidings' organizations: an API key belongs to one organization,
 * so the organizations "you are a part of" are that one, and its members are its one owner (Tidings
 * has no users: the owner's record stands for whoever holds the keys).
 */

export interface OwnerRecord {
  id: string;
  organizationId: string;
}

/** The owner's member record: its ids are the organization's own, so they are stable and known. */
export const ownerOf = (organizationId: string): OwnerRecord => ({ id: organizationId, organizationId });

export async function listOrganizations(deps: Deps, tenant: Tenant): Promise<Organization[]> {
  return [await getOrganization(deps, tenant)];
}

export const currentOrganization = (deps: Deps, tenant: Tenant) => getOrganization(deps, tenant);

/**
 * A new organization, with its Development and Production environments (a General group and an API
 * key each): the keys are how it is reached, so the answer carries them, this once.
 */
export async function createOrganization(
  deps: Deps,
  input: { name: string; logo?: string | undefined },
  sealer: KeySealer | undefined,
) {
  const name = organizationName(input.name);
  const created = await createOrganizationTree(deps, name, sealer);
  const tenant = { organizationId: created.organizationId };
  const organization =
    input.logo === undefined
      ? await getOrganization(deps, tenant)
      : await updateOrganization(deps, tenant, { branding: { logo: requireLogo(input.logo) } });
  return { organization, environments: created.environments };
}

function organizationName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw invalidField("name", "must not be empty");
  return name;
}

export async function renameOrganization(deps: Deps, tenant: Tenant, rawName: string) {
  return updateOrganization(deps, tenant, { name: organizationName(rawName) });
}

const IMAGE = /\.(png|jpe?g|gif|svg)$/i;

/** A logo is an https URL of an image (png, jpg, jpeg, gif, svg), as Novu requires. */
function requireLogo(logo: string): string {
  let url: URL;
  try {
    url = new URL(logo);
  } catch {
    throw invalidField("logo", "must be an https URL");
  }
  if (url.protocol !== "https:") throw invalidField("logo", "must be an https URL");
  if (!IMAGE.test(url.pathname))
    throw invalidField(
      "logo",
      "must be a valid image URL with one of the following extensions: jpg, jpeg, png, gif, svg",
    );
  return logo;
}

/** Sets the branding: the fields sent replace those kept; the others stay. */
export async function updateBranding(deps: Deps, tenant: Tenant, input: Branding): Promise<Branding> {
  if (input.logo !== undefined) requireLogo(input.logo);
  const current = await getOrganization(deps, tenant);
  const branding: Branding = { ...current.branding };
  for (const [key, value] of Object.entries(input) as [keyof Branding, string][])
    if (value !== undefined) (branding as Record<string, string>)[key] = value;
  return (await updateOrganization(deps, tenant, { branding })).branding;
}

/** Who the caller is (Novu's `GET /v1/users/me`): the owner, whose record stands for whoever holds the keys. */
export interface CurrentUser {
  owner: OwnerRecord;
  /** When the user was made: with the organization. */
  createdAt: string;
}

export async function currentUser(deps: Deps, tenant: Tenant): Promise<CurrentUser> {
  const organization = await getOrganization(deps, tenant);
  return { owner: ownerOf(organization.id), createdAt: organization.createdAt };
}

/** The one member: the owner. */
export async function listMembers(_deps: Deps, tenant: Tenant): Promise<OwnerRecord[]> {
  return [ownerOf(tenant.organizationId)];
}

const noMember = (memberId: string) => notFound(`Member ${mention(memberId, "given")} was not found`);

/** The owner cannot be removed (an organization keeps its owner); any other member id is unknown. */
export async function removeMember(_deps: Deps, tenant: Tenant, memberId: string): Promise<never> {
  if (memberId === ownerOf(tenant.organizationId).id)
    throw conflict("The organization's owner cannot be removed: it is its only member");
  throw noMember(memberId);
}

/** The owner is an admin already; any other member id is unknown. */
export async function setMemberRole(_deps: Deps, tenant: Tenant, memberId: string): Promise<OwnerRecord> {
  const owner = ownerOf(tenant.organizationId);
  if (memberId !== owner.id) throw noMember(memberId);
  return owner;
}
