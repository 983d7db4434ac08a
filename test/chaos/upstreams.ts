import { CITY_ROWS, type CityRecord, kindOf, LOW_SUFFIX, lowStreamOf } from '../../src/cities/catalog.ts';
import type { MarketKind } from '../../src/lib/temperature.ts';
import { localDate } from '../../src/lib/local-day.ts';
import { bucketFor, parseLabel, type BucketRange } from '../../src/buckets/labels.ts';
import { gammaEvent, startFakeGamma, tokensOf, type FakeGamma } from '../fakes/gamma.ts';
import { startFakeClob, type FakeClob } from '../fakes/clob.ts';
import { startFakeMetar, type FakeMetar } from '../fakes/metar.ts';
import { startFakeBotApi, type FakeBotApi } from '../fakes/bot-api.ts';

/**
 * The fake world a chaos run's server reads: Gamma events for a few cities, each with its daily-high
 * and its daily-low event (today's city-local date, wide ladders so many crossings fit in one day),
 * CLOB books for every bucket, METAR reports the driver moves to cause crossings, and the Bot API
 * that records every pushed message. The driver remembers every reading it published so the
 * checker can tell a real crossing from an invented one.
 *
 * A city's two streams read one station. Both start at one baseline in the middle of the ladder;
 * the high's readings only rise from it and the low's only fall, so the station's day maximum is
 * the high world's last reading and its minimum the low world's, whatever order they arrive in.
 */
export const CHAOS_CITIES = ['nyc', 'chicago', 'london', 'toronto'] as const;
/** Every city's high then its `-low` stream, interleaved so the driver's one-city wallets get both kinds. */
export const CHAOS_STREAMS: readonly string[] = CHAOS_CITIES.flatMap((c) => [c, c + LOW_SUFFIX]);

/** °F: `1°F or below`, `2-3°F` ... `158-159°F`, `160°F or higher`. °C: `-30°C or below`, `-29°C` ... `79°C`, `80°C or higher`. */
export function wideLadder(unit: 'C' | 'F'): string[] {
  if (unit === 'F') {
    const out = ['1°F or below'];
    for (let lo = 2; lo < 160; lo += 2) out.push(`${lo}-${lo + 1}°F`);
    out.push('160°F or higher');
    return out;
  }
  const out = ['-30°C or below'];
  for (let t = -29; t < 80; t++) out.push(`${t}°C`);
  out.push('80°C or higher');
  return out;
}

export type CityWorld = {
  city: CityRecord;
  /** Which way the stream's readings move: a high only rises, a low only falls. */
  kind: MarketKind;
  labels: string[];
  ranges: BucketRange[];
  /** Current whole-degree reading (city unit) the METAR reports resolve to. */
  reading: number;
  /** Every whole-degree reading published, per city-local date. */
  published: Map<string, Set<number>>;
};

export type Upstreams = {
  gamma: FakeGamma;
  clob: FakeClob;
  metar: FakeMetar;
  bot: FakeBotApi;
  cities: Map<string, CityWorld>;
  /** Makes sure today's (and tomorrow's, for a run crossing midnight) events exist. */
  ensureEvents(nowMs: number): void;
  /**
   * Moves a stream's reading `buckets` buckets its own way (up for a high, down for a low) and
   * publishes the report; 0 republishes the current reading.
   */
  move(slug: string, buckets: number, nowMs: number): number;
  close(): Promise<void>;
};

/** °C with one decimal whose °F rounding is exactly `f` (error <= 0.09 °F). */
const cForF = (f: number) => Math.round((((f - 32) * 5) / 9) * 10) / 10;

/** The baseline both streams of a city start from: mid-ladder, room for ~40 buckets either way. */
const BASELINE = { F: 80, C: 25 } as const;

function streamRecord(slug: string): CityRecord | undefined {
  const base = slug.endsWith(LOW_SUFFIX) ? slug.slice(0, -LOW_SUFFIX.length) : slug;
  const row = CITY_ROWS.find((c) => c.slug === base);
  return row && base !== slug ? lowStreamOf(row) : row;
}

export async function startUpstreams(slugs: readonly string[] = CHAOS_STREAMS): Promise<Upstreams> {
  const [gamma, clob, metar, bot] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar(),
    startFakeBotApi(),
  ]);
  const cities = new Map<string, CityWorld>();
  for (const slug of slugs) {
    const city = streamRecord(slug);
    if (!city?.station) throw new Error(`chaos city ${slug} is not in the catalog`);
    const labels = wideLadder(city.unit);
    cities.set(slug, {
      city,
      kind: kindOf(city),
      labels,
      ranges: labels.map((l) => parseLabel(l)!),
      reading: BASELINE[city.unit],
      published: new Map(),
    });
  }
  const made = new Set<string>();

  const publish = (w: CityWorld, nowMs: number) => {
    // A few seconds in the past, so the report is inside the station's local day and the METAR window.
    const atMs = nowMs - 5_000;
    const tempC = w.city.unit === 'F' ? cForF(w.reading) : w.reading;
    metar.addReport(w.city.station!, { atMs, tempC });
    const date = localDate(w.city.timezone, atMs);
    const set = w.published.get(date) ?? new Set<number>();
    set.add(w.reading);
    w.published.set(date, set);
  };

  const ensureEvents = (nowMs: number) => {
    for (const w of cities.values()) {
      for (const at of [nowMs, nowMs + 86_400_000]) {
        const date = localDate(w.city.timezone, at);
        if (made.has(`${w.city.slug}|${date}`)) continue;
        made.add(`${w.city.slug}|${date}`);
        const ev = gammaEvent({
          token: w.city.marketToken,
          date,
          labels: w.labels,
          cityName: CITY_ROWS.find((c) => c.slug === (w.city.baseSlug ?? w.city.slug))!.displayName,
          kind: w.kind,
        });
        gamma.put(ev);
        w.labels.forEach((label, i) => {
          const t = tokensOf(ev, label);
          clob.quote(
            t.yes,
            t.no,
            Math.round((0.02 + 0.9 * Math.exp(-((i - w.labels.length / 2) ** 2) / 200)) * 1000) / 1000,
          );
        });
      }
    }
  };

  return {
    gamma,
    clob,
    metar,
    bot,
    cities,
    ensureEvents,
    move: (slug, buckets, nowMs) => {
      const w = cities.get(slug)!;
      const here = bucketFor(w.reading, w.ranges);
      const idx = here ? w.ranges.indexOf(here) : 0;
      // Never into the open-ended end buckets, so every step lands on a finite edge.
      if (w.kind === 'high') {
        const target = w.ranges[Math.min(w.ranges.length - 2, idx + buckets)]!;
        // The bucket's lower edge, so a rise of one bucket is a rise of one bucket.
        w.reading = Math.max(w.reading, target.lo);
      } else {
        const target = w.ranges[Math.max(1, idx - buckets)]!;
        // Its upper edge, so a fall of one bucket is a fall of one bucket.
        w.reading = Math.min(w.reading, target.hi);
      }
      publish(w, nowMs);
      return w.reading;
    },
    close: async () => {
      await Promise.all([gamma.close(), clob.close(), metar.close(), bot.close()]);
    },
  };
}

/** Publishes every stream's starting reading (the day's baseline, one value for both kinds). */
export function publishBaselines(u: Upstreams, nowMs: number): void {
  for (const slug of u.cities.keys()) u.move(slug, 0, nowMs);
}
