import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { KeySealer } from "../tenancy/domain.ts";
import { presentMember, presentOrganization, presentUser } from "./presenter.ts";
import {
  BrandingBody,
  BrandingEnvelope,
  CreatedOrganization,
  CreateOrganizationBody,
  MemberEnvelope,
  MemberList,
  MemberParams,
  MemberRoleBody,
  OrganizationEnvelope,
  OrganizationList,
  RenamedEnvelope,
  RenameOrganizationBody,
  UserEnvelope,
} from "./schemas.ts";
import {
  createOrganization,
  currentOrganization,
  currentUser,
  listMembers,
  listOrganizations,
  removeMember,
  renameOrganization,
  setMemberRole,
  updateBranding,
} from "./service.ts";

const TAGS = ["Organizations"];

/**
 * Novu's `/v1/organizations`: the key's organization (its name and branding), its one member (the
 * owner, who is also `/v1/users/me`), and new organizations. `sealer` keeps a new organization's keys for the widget's HMAC.
 */
export const organizationRoutes: RoutePluginWith<{ sealer?: KeySealer | undefined }> = async (
  app,
  { sealer },
) => {
  app.get(
    "/organizations",
    {
      schema: {
        operationId: "listOrganizations",
        tags: TAGS,
        summary: "The organizations the key is part of: its own",
        response: { 200: described(OrganizationList, "The key's organization"), ...errorResponsesOf({}) },
      },
    },
    async (request) => ({
      data: (await listOrganizations(depsOf(app), request.tenant)).map(presentOrganization),
    }),
  );

  app.get(
    "/organizations/me",
    {
      schema: {
        operationId: "getMyOrganization",
        tags: TAGS,
        summary: "The key's organization",
        response: { 200: described(OrganizationEnvelope, "The organization"), ...errorResponsesOf({}) },
      },
    },
    async (request) => ({
      data: presentOrganization(await currentOrganization(depsOf(app), request.tenant)),
    }),
  );

  app.post(
    "/organizations",
    {
      schema: {
        operationId: "createOrganization",
        tags: TAGS,
        summary: "Create an organization",
        description:
          "With its Development and Production environments, each with a General group and an API key: " +
          "the answer's `environments` carry the keys, shown this once (they are the only way into it).",
        headers: IdempotencyKeyHeaders,
        body: CreateOrganizationBody,
        response: {
          201: replayable(described(CreatedOrganization, "The new organization and its keys")),
          ...errorResponsesOf({
            400: "A missing or empty name, or a logo that is not an https image URL",
            409: "A request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => {
        const created = await createOrganization(depsOf(app, db), request.body, sealer);
        return { data: { ...presentOrganization(created.organization), environments: created.environments } };
      }),
  );

  app.patch(
    "/organizations",
    {
      schema: {
        operationId: "renameOrganization",
        tags: TAGS,
        summary: "Rename the key's organization",
        body: RenameOrganizationBody,
        response: {
          200: described(RenamedEnvelope, "The new name"),
          ...errorResponsesOf({ 400: "A missing or empty name" }),
        },
      },
    },
    async (request) => ({
      data: { name: (await renameOrganization(depsOf(app), request.tenant, request.body.name)).name },
    }),
  );

  app.put(
    "/organizations/branding",
    {
      schema: {
        operationId: "updateOrganizationBranding",
        tags: TAGS,
        summary: "Set the organization's branding",
        description:
          "The fields sent replace those kept. Emails and layouts read them as {{branding.logo}}, " +
          "{{branding.color}} (Novu's #f47373 when unset), {{branding.fontColor}}, {{branding.fontFamily}}, " +
          "{{branding.contentBackground}}.",
        body: BrandingBody,
        response: {
          200: described(BrandingEnvelope, "The branding after the change"),
          ...errorResponsesOf({ 400: "A logo that is not an https image URL, or a colour that is not hex" }),
        },
      },
    },
    async (request) => ({ data: await updateBranding(depsOf(app), request.tenant, request.body) }),
  );

  app.get(
    "/organizations/members",
    {
      schema: {
        operationId: "listOrganizationMembers",
        tags: TAGS,
        summary: "The organization's members: its owner",
        response: { 200: described(MemberList, "The one member"), ...errorResponsesOf({}) },
      },
    },
    async (request) => ({ data: (await listMembers(depsOf(app), request.tenant)).map(presentMember) }),
  );

  app.get(
    "/users/me",
    {
      schema: {
        operationId: "getCurrentUser",
        tags: ["Users"],
        summary: "The caller: the organization's owner (Tidings has no users)",
        description:
          "An API key acts for its organization, whose one member is its owner: the user its member record " +
          "(`GET /v1/organizations/members`) names.",
        response: { 200: described(UserEnvelope, "The owner, as a user"), ...errorResponsesOf({}) },
      },
    },
    async (request) => ({ data: presentUser(await currentUser(depsOf(app), request.tenant)) }),
  );

  app.put(
    "/organizations/members/:memberId/roles",
    {
      schema: {
        operationId: "updateOrganizationMemberRole",
        tags: TAGS,
        summary: "Make a member an admin (the owner is one)",
        params: MemberParams,
        body: MemberRoleBody,
        response: {
          200: described(MemberEnvelope, "The member"),
          ...errorResponsesOf({ 400: "A role other than admin", 404: "No such member" }),
        },
      },
    },
    async (request) => ({
      data: presentMember(await setMemberRole(depsOf(app), request.tenant, request.params.memberId)),
    }),
  );

  app.delete(
    "/organizations/members/:memberId",
    {
      schema: {
        operationId: "removeOrganizationMember",
        tags: TAGS,
        summary: "Remove a member (refused for the owner, the only one)",
        params: MemberParams,
        response: {
          200: described(MemberEnvelope, "Never: the one member cannot be removed"),
          ...errorResponsesOf({ 404: "No such member", 409: "The owner cannot be removed" }),
        },
      },
    },
    async (request) => {
      await removeMember(depsOf(app), request.tenant, request.params.memberId);
    },
  );
};
