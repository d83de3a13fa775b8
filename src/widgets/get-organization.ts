import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { getOrganization } from "../tenancy/service.ts";
import { Organization } from "./schemas.ts";

export const getOrganizationRoute: RoutePlugin = async (app) => {
  app.get(
    "/organization",
    {
      schema: {
        operationId: "getWidgetOrganization",
        tags: ["Widget"],
        summary: "The organization the inbox belongs to: its name and branding",
        response: { 200: described(Organization, "The organization"), ...errorResponsesOf({}) },
      },
    },
    async (request) => {
      const organization = await getOrganization(depsOf(app), request.tenant);
      return { data: { _id: organization.id, name: organization.name, branding: organization.branding } };
    },
  );
};
