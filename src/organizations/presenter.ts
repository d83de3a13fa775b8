import type { Organization } from "../tenancy/domain.ts";
import type { CurrentUser, OwnerRecord } from "./service.ts";

/** Novu's OrganizationResponseDto. */
export function presentOrganization(organization: Organization) {
  return {
    _id: organization.id,
    name: organization.name,
    ...(organization.branding.logo ? { logo: organization.branding.logo } : {}),
    branding: organization.branding,
    partnerConfigurations: [],
    createdAt: organization.createdAt,
    updatedAt: organization.updatedAt,
  };
}

/** The owner as a user: the `user` of its member record, and what `GET /v1/users/me` answers. */
function ownerAsUser(owner: OwnerRecord) {
  return { _id: owner.id, firstName: "Owner", lastName: "", email: "" };
}

/** Novu's MemberResponseDto, for the owner. */
export function presentMember(owner: OwnerRecord) {
  return {
    _id: owner.id,
    _userId: owner.id,
    user: ownerAsUser(owner),
    roles: ["admin" as const],
    memberStatus: "active" as const,
    _organizationId: owner.organizationId,
  };
}

/** Novu's UserResponseDto (`GET /v1/users/me`), for the owner: the user since the organization was made. */
export function presentUser(user: CurrentUser) {
  return { ...ownerAsUser(user.owner), profilePicture: null, createdAt: user.createdAt };
}
