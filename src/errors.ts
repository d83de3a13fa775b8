import { STATUS_CODES } from "node:http";
import { type TSchema, Type } from "typebox";

export interface FieldError {
  field: string;
  message: string;
}

/**
 * An error that already knows its HTTP face. Everything the API refuses is thrown as one of these
 * (through the constructors below), and the error handler turns it into the one error body.
 */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly statusCode: number,
    message: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
    /**
     * Fields a client's error model needs beside the body's own (a 409 that names what exists:
     * @novu/api reads the existing subscriber or topic from it). They never replace the body's.
     */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, errors?: FieldError[]) => new ApiError(400, message, errors);

/** A single invalid field: the message reads "<field> <problem>". */
export const invalidField = (field: string, problem: string) =>
  new ApiError(400, `${field} ${problem}`, [{ field, message: problem }]);

export const unauthorized = (message: string) =>
  new ApiError(401, message, undefined, { "www-authenticate": "ApiKey" });

export const notFound = (message: string) => new ApiError(404, message);

const PLAIN_REF = /^[\w.:@+-]{1,128}$/;

/**
 * How a message names a value the caller chose (an id, a key, a transactionId): the value itself
 * when it is a plain token, else the given description. A message never repeats arbitrary text
 * (spaces, quotes, markup) back to the caller.
 */
export const mention = (value: string, otherwise: string) => (PLAIN_REF.test(value) ? value : otherwise);

export const conflict = (
  message: string,
  headers?: Record<string, string>,
  details?: Record<string, unknown>,
) => new ApiError(409, message, undefined, headers, details);

/** A 422 (contract part 4); `field` names what made it (`name`, `to`, `idempotency-key`). */
export const unprocessable = (message: string, field?: string) =>
  new ApiError(422, message, field === undefined ? undefined : [{ field, message }]);

/** How a 422 lists what made it, as Novu's ValidationErrorDto does: by field, each with its messages. */
export type FieldMessages = Record<string, { messages: string[] }>;

export interface ErrorBodyValue {
  statusCode: number;
  error: string;
  message: string;
  path: string;
  timestamp: string;
  /** On a 400: Novu's word for the kind of refusal (`PAYLOAD_VALIDATION_ERROR` when fields are listed). */
  type?: string;
  /** On a 400, each invalid field (none: `[]`); on a 422, what made it, by field (none: `{}`). */
  errors?: FieldError[] | FieldMessages;
  errorId?: string;
}

/** The kind of a 400 (Novu's PayloadValidationException `type`): a field at fault, or the request as a whole. */
export const BAD_REQUEST_TYPES = { fields: "PAYLOAD_VALIDATION_ERROR", request: "BAD_REQUEST" } as const;

/**
 * The one error body (contract part 4). What @novu/api's error models need is always there: a 400
 * carries `type` and its list of `errors` (empty when no one field is at fault), a 422 its `errors`
 * keyed by field; other statuses carry `errors` never.
 */
export function errorBody(
  statusCode: number,
  message: string,
  path: string,
  extra: {
    errors?: readonly FieldError[] | undefined;
    errorId?: string;
    details?: Record<string, unknown>;
  } = {},
): ErrorBodyValue {
  const body: ErrorBodyValue = {
    ...extra.details,
    statusCode,
    error: STATUS_CODES[statusCode] ?? "Error",
    message,
    path,
    timestamp: new Date().toISOString(),
  };
  const errors = extra.errors ?? [];
  if (statusCode === 400) {
    body.type = errors.length > 0 ? BAD_REQUEST_TYPES.fields : BAD_REQUEST_TYPES.request;
    body.errors = [...errors];
  } else if (statusCode === 422) {
    const byField: FieldMessages = {};
    for (const { field, message: problem } of errors) {
      const entry = byField[field] ?? { messages: [] };
      entry.messages.push(problem);
      byField[field] = entry;
    }
    body.errors = byField;
  }
  if (extra.errorId) body.errorId = extra.errorId;
  return body;
}

const FieldErrors = Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
  description: "On a 400: each invalid field (empty when no one field is at fault)",
});
const FieldMessagesSchema = Type.Record(Type.String(), Type.Object({ messages: Type.Array(Type.String()) }), {
  description: "On a 422: what made it, by field, each with its messages (Novu's ValidationErrorDto)",
});

const errorFields = {
  statusCode: Type.Integer({ description: "The HTTP status code, repeated" }),
  error: Type.String({ description: "The status code's reason phrase" }),
  message: Type.String({ description: "One human sentence saying what went wrong" }),
  path: Type.String({ description: "The request path" }),
  timestamp: Type.String({ format: "date-time" }),
  type: Type.Optional(
    Type.String({
      description:
        "On a 400: `PAYLOAD_VALIDATION_ERROR` when fields are listed in `errors`, else `BAD_REQUEST`",
    }),
  ),
  errors: Type.Optional(Type.Union([FieldErrors, FieldMessagesSchema])),
  errorId: Type.Optional(Type.String({ description: "On 5xx: the id of the log line that describes it" })),
};

export const ErrorBody = Type.Object(errorFields, { title: "Error" });

/**
 * The error body with a resource's fields beside it (a 409 naming the subscriber or topic that
 * exists, which @novu/api parses that answer as).
 */
export const ErrorBodyWith = <T extends Record<string, TSchema>>(title: string, fields: T) =>
  Type.Object({ ...fields, ...errorFields }, { title });
