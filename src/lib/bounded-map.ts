/** A memo that starts again empty at `max`: a flood of unusual keys costs at most the cap, and no LRU work per hit. */
export function boundedMap<V>(max: number) {
  const map = new Map<string, V>();
  return {
    memo(key: string, make: () => V): V {
      let v = map.get(key);
      if (v === undefined) {
        v = make();
        if (map.size >= max) map.clear();
        map.set(key, v);
      }
      return v;
    },
  };
}

export type BoundedMap<V> = ReturnType<typeof boundedMap<V>>;
