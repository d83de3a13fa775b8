import type { Organization } from "../tenancy/domain.ts";
import type { OwnerRecord } from "./service.ts";

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

/** Novu's MemberResponseDto, for the owner. */
export function presentMember(owner: OwnerRecord) {
  return {
    _id: owner.id,
    _userId: owner.id,
    user: { _id: owner.id, firstName: "Owner", lastName: "", email: "" },
    roles: ["admin" as const],
    memberStatus: "active" as const,
    _organizationId: owner.organizationId,
  };
}
