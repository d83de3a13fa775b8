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
