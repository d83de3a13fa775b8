import { type Static, Type } from "typebox";
import { ObjectIdString } from "../http/schema-helpers.ts";

export const EnvironmentResource = Type.Object(
  {
    _id: ObjectIdString("The environment's id"),
    name: Type.String(),
    identifier: Type.String({
      description: "The public application id (the inbox widget's applicationIdentifier)",
    }),
    _organizationId: ObjectIdString("The organization"),
    _parentId: Type.String({
      description: "The environment this one derives from (Production's is Development), or empty",
    }),
    hmac: Type.Boolean({ description: "Whether subscriber sessions must carry an HMAC of the subscriberId" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Environment", additionalProperties: false },
);
export type EnvironmentValue = Static<typeof EnvironmentResource>;

export const ApiKeyResource = Type.Object(
  {
    _id: ObjectIdString("The key's id"),
    key: Type.String({
      description: "Masked (its last four characters) in listings; whole only when just made",
    }),
    _userId: Type.String({ description: "Empty: keys belong to the environment, not to a user" }),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    createdAt: Type.String({ format: "date-time" }),
  },
  { title: "ApiKey", additionalProperties: false },
);
export type ApiKeyValue = Static<typeof ApiKeyResource>;

export const UpdateEnvironmentBody = Type.Object(
  { hmac: Type.Boolean({ description: "Require an HMAC of the subscriberId for subscriber sessions" }) },
  { additionalProperties: false },
);

/** An environment in the organization's listing: with its API keys, masked, for the caller's own only. */
export const ListedEnvironment = Type.Object(
  {
    ...EnvironmentResource.properties,
    apiKeys: Type.Array(ApiKeyResource, {
      description:
        "The caller's environment: its live keys, masked (as Novu, which shows keys of the caller's environment only); another environment: empty",
    }),
  },
  { title: "ListedEnvironment", additionalProperties: false },
);
