import { parse } from "node:querystring";

/**
 * The query-string parser of every route. As Fastify's own, plus one habit of the clients Novu's API
 * serves: axios (and so @novu/node) writes an array parameter as `key[]=a&key[]=b`, which Novu's
 * server reads as the array `key`. Here too: `key[]` is folded into `key` (a repeated `key` already
 * is an array), so `messages.list({ transactionIds })` filters instead of being silently ignored.
 * Nothing else of that syntax (`key[0]`, `key[sub]`) is read: those stay keys of their own, which the
 * schemas ignore or refuse.
 */
export function parseQueryString(text: string): Record<string, string | string[]> {
  const parsed = parse(text);
  // Without a prototype, as node's parse returns it: a key named __proto__ stays a plain key.
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [rawKey, value] of Object.entries(parsed)) {
    if (value === undefined) continue;
    const bracketed = rawKey.length > 2 && rawKey.endsWith("[]");
    const key = bracketed ? rawKey.slice(0, -2) : rawKey;
    const known = query[key];
    // `key[]=a` alone is still an array, as Novu's server reads it.
    query[key] = known === undefined ? (bracketed ? [value].flat() : value) : [known, value].flat();
  }
  return query;
}
