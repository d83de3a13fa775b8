import { Type } from "typebox";
import { Envelope, ObjectIdString } from "../http/schema-helpers.ts";
import { SUBSCRIBER_ID_TEXT_PATTERN } from "../http/validation.ts";

const HexColor = (description: string) =>
  Type.String({ pattern: "^#([0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$", description });
const Logo = Type.String({
  maxLength: 2048,
  description: "An https URL of an image (png, jpg, jpeg, gif or svg)",
});

export const BrandingBody = Type.Object(
  {
    logo: Type.Optional(Logo),
    color: Type.Optional(HexColor("The brand colour ({{branding.color}})")),
    fontColor: Type.Optional(HexColor("The text colour")),
    contentBackground: Type.Optional(HexColor("The background of an email's content")),
    fontFamily: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "The font" })),
    direction: Type.Optional(Type.Union([Type.Literal("ltr"), Type.Literal("rtl")])),
  },
  { additionalProperties: false },
);

const BrandingResource = Type.Object(
  {
    logo: Type.Optional(Type.String()),
    color: Type.Optional(Type.String()),
    fontColor: Type.Optional(Type.String()),
    contentBackground: Type.Optional(Type.String()),
    fontFamily: Type.Optional(Type.String()),
    direction: Type.Optional(Type.String()),
  },
  { title: "OrganizationBranding", additionalProperties: false },
);
export const BrandingEnvelope = Envelope(BrandingResource);

export const OrganizationResource = Type.Object(
  {
    _id: ObjectIdString("The organization"),
    name: Type.String(),
    logo: Type.Optional(Type.String()),
    branding: BrandingResource,
    partnerConfigurations: Type.Array(Type.Never(), { description: "Always empty" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Organization", additionalProperties: false },
);

export const OrganizationEnvelope = Envelope(OrganizationResource);
export const OrganizationList = Envelope(Type.Array(OrganizationResource));

export const CreatedOrganization = Envelope(
  Type.Object(
    {
      ...OrganizationResource.properties,
      environments: Type.Array(
        Type.Object(
          {
            _id: ObjectIdString("The environment"),
            name: Type.String(),
            apiKey: Type.String({ description: "The environment's API key, shown this once" }),
          },
          { additionalProperties: false },
        ),
        { description: "Tidings: the new organization's environments and their keys (its only way in)" },
      ),
    },
    { title: "CreatedOrganization", additionalProperties: false },
  ),
);

const OrganizationName = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "The organization's name",
});

export const CreateOrganizationBody = Type.Object(
  {
    name: OrganizationName,
    logo: Type.Optional(Logo),
    jobTitle: Type.Optional(Type.String({ maxLength: 100, description: "Ignored" })),
    domain: Type.Optional(Type.String({ maxLength: 255, description: "Ignored" })),
    productUseCases: Type.Optional(
      Type.Record(Type.String({ maxLength: 50 }), Type.Boolean(), { description: "Ignored" }),
    ),
  },
  { additionalProperties: false },
);

export const RenameOrganizationBody = Type.Object(
  { name: OrganizationName },
  { additionalProperties: false },
);
export const RenamedEnvelope = Envelope(
  Type.Object({ name: Type.String() }, { additionalProperties: false }),
);

const OwnerUserFields = {
  _id: Type.String({ description: "The owner's id: the organization's" }),
  firstName: Type.String({ description: "Owner" }),
  lastName: Type.String({ description: "Empty" }),
  email: Type.String({ description: "Empty: Tidings keeps no one's address" }),
};

export const MemberResource = Type.Object(
  {
    _id: Type.String({ description: "The member (the owner's is the organization's id)" }),
    _userId: Type.String(),
    user: Type.Object(OwnerUserFields, { additionalProperties: false }),
    roles: Type.Array(Type.Literal("admin")),
    memberStatus: Type.Literal("active"),
    _organizationId: ObjectIdString("The organization"),
  },
  { title: "Member", additionalProperties: false },
);
export const MemberEnvelope = Envelope(MemberResource);
export const MemberList = Envelope(Type.Array(MemberResource));
export const MemberParams = Type.Object({
  memberId: Type.String({
    pattern: SUBSCRIBER_ID_TEXT_PATTERN,
    maxLength: 100,
    description: "A member's _id",
  }),
});
export const MemberRoleBody = Type.Object(
  { role: Type.Literal("admin", { description: "The one role: admin" }) },
  { additionalProperties: false },
);

/** Novu's UserResponseDto, for the owner (Tidings has no users). */
export const UserEnvelope = Envelope(
  Type.Object(
    {
      ...OwnerUserFields,
      profilePicture: Type.Null({ description: "None" }),
      createdAt: Type.String({ format: "date-time", description: "When the organization was made" }),
    },
    { title: "User", additionalProperties: false },
  ),
);
