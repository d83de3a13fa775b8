import { type Static, Type } from "typebox";
import { ObjectIdString } from "../http/schema-helpers.ts";

export const NotificationGroup = Type.Object(
  {
    _id: ObjectIdString("The group's id"),
    name: Type.String(),
    _environmentId: ObjectIdString("The environment the group belongs to"),
    _organizationId: ObjectIdString("The organization the group belongs to"),
    _parentId: Type.String({
      description: "The id of the group this one is the counterpart of in another environment, or empty",
    }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "NotificationGroup", additionalProperties: false },
);

export type NotificationGroupResource = Static<typeof NotificationGroup>;

export const GroupNameBody = Type.Object(
  {
    name: Type.String({
      description: "1–100 characters after trimming, no control characters; unique within the environment",
      examples: ["Marketing"],
    }),
  },
  { additionalProperties: false },
);

export const GroupIdParams = Type.Object({ id: ObjectIdString("The group's id") });

export const GroupDeleted = Type.Object(
  {
    data: Type.Object(
      { acknowledged: Type.Literal(true), status: Type.Literal("deleted") },
      { additionalProperties: false },
    ),
  },
  { title: "NotificationGroupDeleted", additionalProperties: false },
);
