import type { Observation } from '../buckets/daily-high.ts';
import type { CityRecord } from '../cities/catalog.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { asError } from '../sources/upstream.ts';

/**
 * One observation batch per weather feed per tick: NOAA-rule days read METAR even when Weather
 * Underground days read weather.com. A feed with its own cadence (weather.com: one call per
 * station) is asked only when it is due; its cities simply wait for the next tick that asks it.
 */
export function createFeedBatches(intervalMs: number) {
  const lastAskedAt = new Map<WeatherSource, number>();
  // Tick start times jitter by a few ms; a feed due "now" should not slip a whole tick.
  const slackMs = Math.min(1_000, intervalMs / 2);

  return async function observeDue<D extends { city: CityRecord; date: string; feed: WeatherSource }>(
    days: D[],
    startedAtMs: number,
  ): Promise<{ asked: D[]; observations: Map<string, Observation[] | Error> }> {
    const feeds = [...new Set(days.map((d) => d.feed))].filter((feed) => {
      const last = lastAskedAt.get(feed);
      if (feed.minIntervalMs && last !== undefined && startedAtMs - last < feed.minIntervalMs - slackMs) return false;
      lastAskedAt.set(feed, startedAtMs);
      return true;
    });
    const observations = new Map<string, Observation[] | Error>();
    await Promise.all(
      feeds.map(async (feed) => {
        const batch = days.filter((d) => d.feed === feed);
        try {
          for (const [slug, obs] of await feed.observe(batch)) observations.set(slug, obs);
        } catch (err) {
          for (const d of batch) observations.set(d.city.slug, asError(err));
        }
      }),
    );
    return { asked: days.filter((d) => feeds.includes(d.feed)), observations };
  };
}
