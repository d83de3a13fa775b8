import createClient from "openapi-fetch";
import type { paths } from "./api-schema.ts";

const KEY = "tidings.apiKey";

/** The key lives in this tab's sessionStorage only: never a cookie, never the URL. */
export const storedKey = (): string | null => sessionStorage.getItem(KEY);
export const storeKey = (key: string) => sessionStorage.setItem(KEY, key);
export const forgetKey = () => sessionStorage.removeItem(KEY);

/** The API, typed from /openapi.json (scripts/dashboard-api-types.ts), on this page's own origin. */
export const api = createClient<paths>({ baseUrl: location.origin });
api.use({
  onRequest({ request }) {
    const key = storedKey();
    if (key) request.headers.set("Authorization", `ApiKey ${key}`);
    return request;
  },
});

/** What a failed call says, for the person looking at the page. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The data of a successful answer, or an ApiError carrying the API's own message. */
export async function ok<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data, error, response } = await call;
  if (error !== undefined || data === undefined || data === null) {
    const message =
      typeof error === "object" && error !== null && "message" in error
        ? String(error.message)
        : response.statusText;
    throw new ApiError(response.status, message || `HTTP ${response.status}`);
  }
  return data as NonNullable<T>;
}

const KEYRING = "tidings.environmentKeys";

/**
 * The keys this tab was given, by environment id (sessionStorage only): switching back to an
 * environment already signed into needs no key again. Keys are kept only as hashes by the API, so
 * another environment's key cannot be fetched; it is typed in once.
 */
export function knownKeys(): Record<string, string> {
  try {
    return JSON.parse(sessionStorage.getItem(KEYRING) ?? "{}") as Record<string, string>;
  } catch {
    return {};
  }
}
export function rememberKey(environmentId: string, key: string) {
  sessionStorage.setItem(KEYRING, JSON.stringify({ ...knownKeys(), [environmentId]: key }));
}
export function forgetKeys() {
  sessionStorage.removeItem(KEYRING);
}

/** A call answered with no body (204): throws as `ok` does when it failed. */
export async function done(call: Promise<{ error?: unknown; response: Response }>): Promise<void> {
  const { error, response } = await call;
  if (!response.ok) {
    const message =
      typeof error === "object" && error !== null && "message" in error
        ? String(error.message)
        : response.statusText;
    throw new ApiError(response.status, message || `HTTP ${response.status}`);
  }
}
