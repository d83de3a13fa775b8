import { type TSchema, Type } from "typebox";
import { ErrorBody } from "../errors.ts";

export const ObjectIdString = (description: string) =>
  Type.String({ pattern: "^[0-9a-f]{24}$", description, examples: ["65f1c0ffee0123456789abcd"] });

/** Wraps a resource in the `{ data }` envelope every successful response uses. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ data }, { additionalProperties: false });

/** A free-form JSON object, serialised as it is. */
export const FreeObject = (description?: string) =>
  Type.Unsafe<Record<string, unknown>>({
    type: "object",
    additionalProperties: true,
    ...(description ? { description } : {}),
  });

/** A response schema with the sentence OpenAPI shows for it. */
export const described = <T extends TSchema>(schema: T, description: string): T => ({
  ...schema,
  description,
});

const COMMON_ERRORS: Record<number, string> = {
  401: "The API key is missing, unknown or revoked (with `WWW-Authenticate: ApiKey`)",
  429: "Too many requests for the environment (with `Retry-After`)",
};

/**
 * The error responses of a route: the codes it documents, each with what it means there, and the
 * common ones; any other 4xx or 5xx has the same body.
 */
export function errorResponsesOf(codes: Record<number, string>) {
  const all = { ...COMMON_ERRORS, ...codes };
  const documented: Record<string, typeof ErrorBody> = {};
  for (const [code, description] of Object.entries(all)) documented[code] = described(ErrorBody, description);
  return {
    ...documented,
    "4xx": described(ErrorBody, "Another client error (413 body too large, 415 not JSON...)"),
    "5xx": described(ErrorBody, "A server error (500 with an errorId for the logs; 503 with Retry-After)"),
  };
}

/** A response with no body (204): OpenAPI shows the status with no content. */
export const NoContent = (description: string) => Type.Null({ description });

/** A page of a list, in Novu's shape. `things` names the items in the descriptions. */
export const Page = <T extends TSchema>(
  title: string,
  item: T,
  { things, order }: { things: string; order: string },
) =>
  Type.Object(
    {
      page: Type.Integer({ description: "The page returned (zero-based)" }),
      pageSize: Type.Integer({ description: "The page size asked for" }),
      totalCount: Type.Integer({ description: `How many ${things} match, on all pages` }),
      hasMore: Type.Boolean({ description: `Whether a later page has ${things}` }),
      data: Type.Array(item, { description: order }),
    },
    { title, additionalProperties: false },
  );

/** The query of a /v2 list paged by cursor (src/store/cursor-page.ts), as Novu's /v2 lists take it. */
export const cursorQueryFields = <const K extends string>(things: string, orderBy: readonly K[]) => ({
  after: Type.Optional(
    ObjectIdString(`The page after this one of the ${things} (its _id: a page's \`next\`); not with before`),
  ),
  before: Type.Optional(ObjectIdString(`The page before this one of the ${things} (a page's \`previous\`)`)),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "Page size, 1–100; default 10" }),
  ),
  orderBy: Type.Optional(
    Type.Unsafe<K>({
      type: "string",
      enum: [...orderBy],
      description: `What the ${things} are ordered by (then by _id); default \`${orderBy[0]}\``,
    }),
  ),
  orderDirection: Type.Optional(
    Type.Unsafe<"ASC" | "DESC">({ type: "string", enum: ["ASC", "DESC"], description: "Default DESC" }),
  ),
  includeCursor: Type.Optional(
    Type.Boolean({ description: "The page starts at the cursor's own item rather than after it" }),
  ),
});

/** A page of a /v2 list paged by cursor. */
export const CursorPageOf = <T extends TSchema>(title: string, item: T, things: string) =>
  Type.Object(
    {
      data: Type.Array(item),
      next: Type.Union([Type.String(), Type.Null()], {
        description: `The cursor of the next page (\`after\`), null after the last ${things}`,
      }),
      previous: Type.Union([Type.String(), Type.Null()], {
        description: `The cursor of the previous page (\`before\`), null before the first ${things}`,
      }),
      totalCount: Type.Integer({ description: `How many ${things} match, counted up to 50,000` }),
      totalCountCapped: Type.Boolean({ description: "More than 50,000 match (totalCount stops there)" }),
    },
    { title, additionalProperties: false },
  );
