import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { readFilter, readTags } from "./filters.ts";
import { NotificationsPage, NotificationsQuery } from "./notification-schemas.ts";
import { presentInboxNotification } from "./presenter.ts";
import { listNotifications } from "./service.ts";

/** `tags[0][]`, `tags[1][]`...: the query string's groups, in their order (undefined when none). */
function tagGroupsOf(query: Record<string, unknown>): unknown[] | undefined {
  const groups: [number, unknown][] = [];
  for (const [key, value] of Object.entries(query)) {
    const match = /^tags\[(\d{1,2})\]$/.exec(key);
    if (match) groups.push([Number(match[1]), [value].flat()]);
  }
  return groups.length > 0 ? groups.sort((a, b) => a[0] - b[0]).map(([, group]) => group) : undefined;
}

export const listNotificationsRoute: RoutePlugin = async (app) => {
  app.get(
    "/notifications",
    {
      schema: {
        operationId: "listInboxNotifications",
        tags: ["Inbox session"],
        summary: "The session's subscriber's notifications, newest first",
        description:
          "Not snoozed ones unless `snoozed=true`. `tags[]` is one group of tags (any of them), `tags[0][]`, " +
          "`tags[1][]`... several (one of each); `data` a JSON object of data fields to match; pages go on " +
          "`after` the last notification of the previous one.",
        querystring: NotificationsQuery,
        response: {
          200: described(NotificationsPage, "One page, whether more follow, and the filter as read"),
          ...errorResponsesOf({ 400: "A query value that is not a filter, or an unknown `after`" }),
        },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      const groups = tagGroupsOf(query);
      const tags = groups ?? (query.tags === undefined ? undefined : [query.tags].flat());
      const filter = readFilter({ ...query, tags });
      const { limit, offset, after } = request.query;
      const { subscriber } = request.subscriberSession;
      const page = await listNotifications(depsOf(app), request.tenant, subscriber, {
        filter,
        ...(limit !== undefined ? { limit } : {}),
        ...(offset !== undefined ? { offset } : {}),
        ...(after !== undefined ? { after } : {}),
      });
      return {
        data: page.notifications.map((n) => presentInboxNotification(n, subscriber)),
        hasMore: page.hasMore,
        filter: echoFilter(query, tags),
      };
    },
  );
};

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
