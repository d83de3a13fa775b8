/** `items` grouped by `key`, each group holding `value` of its items, in the items' order. */
export function groupBy<T, K, V = T>(
  items: readonly T[],
  key: (item: T) => K,
  value: (item: T) => V = (item) => item as unknown as V,
): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(value(item));
    else groups.set(k, [value(item)]);
  }
  return groups;
}
