import { Type } from "typebox";
import { Envelope, ObjectIdString } from "../http/schema-helpers.ts";
import { SUBSCRIBER_ID_TEXT_PATTERN } from "../http/validation.ts";

const MAX_CONTENT = 256 * 1024;

const LayoutIdentifier = (description = "The layout's identifier, unique in the environment") =>
  Type.String({ pattern: SUBSCRIBER_ID_TEXT_PATTERN, maxLength: 128, description });
const LayoutName = Type.String({ minLength: 1, maxLength: 200, description: "The layout's name" });
const LayoutDescription = Type.String({ maxLength: 1000, description: "What the layout is for" });
const LayoutContent = Type.String({
  minLength: 1,
  maxLength: MAX_CONTENT,
  description: "The layout's HTML, a Handlebars template that places the email's content with {{{body}}}",
});

const LayoutVariable = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.Optional(
      Type.String({ maxLength: 50, description: "String, Array or Boolean, as Novu's editor names them" }),
    ),
    defaultValue: Type.Optional(
      Type.Unknown({ description: "What the layout shows when the payload has no value" }),
    ),
    required: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const LayoutVariables = Type.Array(LayoutVariable, {
  maxItems: 100,
  description: "Defaults for the variables the content reads (the others are ignored)",
});

export const LayoutResource = Type.Object(
  {
    _id: ObjectIdString("The layout's id"),
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    _creatorId: Type.String({ description: "The API key that created it" }),
    _parentId: Type.Optional(ObjectIdString("The layout this one was promoted from")),
    name: Type.String(),
    identifier: Type.String(),
    description: Type.String(),
    channel: Type.Literal("email"),
    content: Type.String(),
    contentType: Type.Literal("customHtml"),
    variables: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          type: Type.String(),
          defaultValue: Type.Optional(Type.Unknown()),
          required: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    isDefault: Type.Boolean({ description: "Whether email steps that name no layout get this one" }),
    isDeleted: Type.Boolean({ description: "Always false: a deleted layout is gone" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Layout", additionalProperties: false },
);

export const LayoutEnvelope = Envelope(LayoutResource);

export const LayoutPage = Type.Object(
  {
    page: Type.Integer({ description: "The page returned (zero-based)" }),
    pageSize: Type.Integer({ description: "The page size asked for" }),
    totalCount: Type.Integer({ description: "How many layouts the environment has" }),
    data: Type.Array(LayoutResource, { description: "By creation, oldest first unless orderBy=-1" }),
  },
  { title: "LayoutPage", additionalProperties: false },
);

export const LayoutParams = Type.Object({ layoutId: ObjectIdString("The layout's id") });

export const ListLayoutsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  sortBy: Type.Optional(Type.Literal("createdAt", { description: "The one order: by creation" })),
  orderBy: Type.Optional(
    Type.Union([Type.Literal(1), Type.Literal(-1)], {
      description: "1 oldest first (the default), -1 newest",
    }),
  ),
});

export const CreateLayoutBody = Type.Object(
  {
    name: LayoutName,
    identifier: LayoutIdentifier(),
    description: Type.Optional(LayoutDescription),
    content: LayoutContent,
    variables: Type.Optional(LayoutVariables),
    isDefault: Type.Optional(
      Type.Boolean({
        description: "Make it the environment's default (the previous default is not anymore)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateLayoutBody = Type.Object(
  {
    name: Type.Optional(LayoutName),
    identifier: Type.Optional(LayoutIdentifier("A new identifier")),
    description: Type.Optional(LayoutDescription),
    content: Type.Optional(LayoutContent),
    variables: Type.Optional(LayoutVariables),
    isDefault: Type.Optional(
      Type.Boolean({ description: "true makes it the default; false on the default is refused (409)" }),
    ),
  },
  { additionalProperties: false },
);

// ------------------------------------------------------------------------------------------------ /v2

const LayoutRef = Type.String({
  pattern: SUBSCRIBER_ID_TEXT_PATTERN,
  maxLength: 128,
  description: "The layout's identifier (its layoutId), or its id",
});
export const LayoutV2Params = Type.Object({ layoutId: LayoutRef });

const EmailControls = Type.Object(
  {
    body: LayoutContent,
    editorType: Type.Optional(
      Type.Literal("html", { description: "Only HTML: Tidings has no block editor" }),
    ),
  },
  { additionalProperties: false },
);

export const LayoutV2 = Type.Object(
  {
    _id: ObjectIdString("The layout's id"),
    id: ObjectIdString("The layout's id"),
    layoutId: Type.String({ description: "The layout's identifier" }),
    slug: Type.String({ description: "The same identifier" }),
    name: Type.String(),
    isDefault: Type.Boolean(),
    isTranslationEnabled: Type.Boolean({ description: "Always false: Tidings has no translations" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
    origin: Type.Literal("novu-cloud"),
    type: Type.Literal("REGULAR"),
    variables: Type.Null(),
    controls: Type.Object(
      {
        values: Type.Object(
          {
            email: Type.Object(
              { body: Type.String(), editorType: Type.Literal("html") },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: "LayoutV2", additionalProperties: false },
);

export const LayoutV2List = Type.Object(
  { layouts: Type.Array(LayoutV2), totalCount: Type.Integer() },
  { title: "LayoutV2List", additionalProperties: false },
);

export const ListLayoutsV2Query = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Default 10" })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Default 0" })),
  orderBy: Type.Optional(
    Type.Union([Type.Literal("createdAt"), Type.Literal("updatedAt"), Type.Literal("name")], {
      description: "Default createdAt",
    }),
  ),
  orderDirection: Type.Optional(
    Type.Union([Type.Literal("ASC"), Type.Literal("DESC")], { description: "Default DESC" }),
  ),
  query: Type.Optional(
    Type.String({ maxLength: 200, description: "Only layouts whose name or layoutId contains this" }),
  ),
});

export const CreateLayoutV2Body = Type.Object(
  {
    layoutId: LayoutIdentifier(),
    name: LayoutName,
    isTranslationEnabled: Type.Optional(
      Type.Boolean({ description: "Ignored: Tidings has no translations" }),
    ),
    __source: Type.Optional(Type.String({ maxLength: 50, description: "Ignored" })),
  },
  { additionalProperties: false },
);

export const UpdateLayoutV2Body = Type.Object(
  {
    name: LayoutName,
    isTranslationEnabled: Type.Optional(
      Type.Boolean({ description: "Ignored: Tidings has no translations" }),
    ),
    controlValues: Type.Optional(
      Type.Union(
        [Type.Object({ email: Type.Optional(EmailControls) }, { additionalProperties: false }), Type.Null()],
        {
          description: "`email.body` is the layout's HTML (with {{{body}}}); null puts the plain layout back",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const DuplicateLayoutBody = Type.Object(
  {
    name: LayoutName,
    layoutId: Type.Optional(LayoutIdentifier("The copy's identifier (else one made from the name)")),
    isTranslationEnabled: Type.Optional(Type.Boolean({ description: "Ignored" })),
  },
  { additionalProperties: false },
);

export const LayoutUsage = Type.Object(
  {
    workflows: Type.Array(
      Type.Object({ name: Type.String(), workflowId: Type.String() }, { additionalProperties: false }),
    ),
  },
  { title: "LayoutUsage", additionalProperties: false },
);
