import { readFilter, readTags } from "./filters.ts";
import type { NotificationsQuery } from "./service.ts";

/**
 * The list's query string as Novu's clients send it (the session's inbox and the API key's mirror of
 * it alike): the filter to apply, the filter as sent (echoed back in the client's own terms), and
 * the page asked for.
 */
export function readListQuery(query: Record<string, unknown>): {
  query: NotificationsQuery;
  echo: Record<string, unknown>;
} {
  const groups = tagGroupsOf(query);
  const tags = groups ?? (query.tags === undefined ? undefined : [query.tags].flat());
  const filter = readFilter({ ...query, tags });
  const { limit, offset, after } = query as { limit?: number; offset?: number; after?: string };
  return {
    query: {
      filter,
      ...(limit !== undefined ? { limit } : {}),
      ...(offset !== undefined ? { offset } : {}),
      ...(after !== undefined ? { after } : {}),
    },
    echo: echoFilter(query, tags),
  };
}

/** `tags[0][]`, `tags[1][]`...: the query string's groups, in their order (undefined when none). */
function tagGroupsOf(query: Record<string, unknown>): unknown[] | undefined {
  const groups: [number, unknown][] = [];
  for (const [key, value] of Object.entries(query)) {
    const match = /^tags\[(\d{1,2})\]$/.exec(key);
    if (match) groups.push([Number(match[1]), [value].flat()]);
  }
  return groups.length > 0 ? groups.sort((a, b) => a[0] - b[0]).map(([, group]) => group) : undefined;
}

/** The filter as the client sent it, in its own terms (what Novu echoes). */
function echoFilter(query: Record<string, unknown>, tags: unknown[] | undefined) {
  const groups = readTags(tags);
  const echo: Record<string, unknown> = {};
  if (groups) echo.tags = groups.length === 1 ? groups[0] : { and: groups.map((or) => ({ or })) };
  for (const flag of ["read", "archived", "snoozed", "seen"] as const) {
    if (query[flag] !== undefined) echo[flag] = query[flag] === true || query[flag] === "true";
  }
  if (typeof query.data === "string" && query.data !== "") echo.data = JSON.parse(query.data) as unknown;
  if (query.severity !== undefined) echo.severity = query.severity;
  for (const moment of ["createdGte", "createdLte"] as const) {
    if (query[moment] !== undefined && query[moment] !== "") echo[moment] = Number(query[moment]);
  }
  return echo;
}
