/**
 * Event pages the poller has seen, by (city, local date), for the signal routes' `marketUrl`
 * before a signal exists. Only recent days are asked for, so the oldest entries are dropped past
 * `maxEntries` (a Map keeps insertion order; a re-remembered key moves to the end).
 */
export function createMarketUrls(maxEntries: number) {
  const urls = new Map<string, string>();
  return {
    remember(city: string, date: string, url: string): void {
      const key = `${city}|${date}`;
      urls.delete(key);
      urls.set(key, url);
      if (urls.size > maxEntries) urls.delete(urls.keys().next().value!);
    },
    get: (city: string, date: string): string | null => urls.get(`${city}|${date}`) ?? null,
  };
}
