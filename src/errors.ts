import { STATUS_CODES } from "node:http";
import { Type } from "typebox";

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

export const conflict = (message: string, headers?: Record<string, string>) =>
  new ApiError(409, message, undefined, headers);

export const unprocessable = (message: string) => new ApiError(422, message);

export interface ErrorBodyValue {
  statusCode: number;
  error: string;
  message: string;
  path: string;
  timestamp: string;
  errors?: FieldError[];
  errorId?: string;
}

export function errorBody(
  statusCode: number,
  message: string,
  path: string,
  extra: { errors?: FieldError[]; errorId?: string } = {},
): ErrorBodyValue {
  const body: ErrorBodyValue = {
    statusCode,
    error: STATUS_CODES[statusCode] ?? "Error",
    message,
    path,
    timestamp: new Date().toISOString(),
  };
  if (extra.errors && extra.errors.length > 0) body.errors = extra.errors;
  if (extra.errorId) body.errorId = extra.errorId;
  return body;
}

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer({ description: "The HTTP status code, repeated" }),
    error: Type.String({ description: "The status code's reason phrase" }),
    message: Type.String({ description: "One human sentence saying what went wrong" }),
    path: Type.String({ description: "The request path" }),
    timestamp: Type.String({ format: "date-time" }),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: "Each invalid field (validation errors only)",
      }),
    ),
    errorId: Type.Optional(Type.String({ description: "On 5xx: the id of the log line that describes it" })),
  },
  { title: "Error" },
);
