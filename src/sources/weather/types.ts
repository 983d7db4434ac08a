import type { CityRecord } from '../../cities/catalog.ts';
import type { Observation } from '../../buckets/daily-high.ts';
import { asError, mapLimit } from '../upstream.ts';

type DayRequest = { city: CityRecord; date: string };
type Observed = Map<string, Observation[] | Error>;

/** A failure affects only the cities it names: the map holds an Error for those. */
export type WeatherSource = {
  /** Written into each signal's `source`. */
  readonly name: string;
  /** The wire the readings came over, written into each signal's `channel`; absent: `name`. */
  readonly channel?: string;
  /** Least time between two asks of a feed billed per station (weather.com); absent: every tick. */
  readonly minIntervalMs?: number;
  /** The real instant of a report stamped `atMs` in simulated time; absent: `atMs` is real. */
  reportedAtReal?(atMs: number): number;
  observe(requests: readonly DayRequest[]): Promise<Observed>;
};

/**
 * Requests with one key share an upstream call (`perCall` keys to a call); a request whose key is an
 * Error fails alone, and a failed call fails only its own cities.
 */
export async function observeByCall(
  requests: readonly DayRequest[],
  opts: {
    keyOf(r: DayRequest): string | Error;
    perCall?: number;
    concurrency?: number;
    call(keys: string[], reqs: DayRequest[]): Promise<(r: DayRequest) => Observation[] | Error>;
  },
): Promise<Observed> {
  const out: Observed = new Map();
  const byKey = new Map<string, DayRequest[]>();
  for (const r of requests) {
    const key = opts.keyOf(r);
    if (key instanceof Error) out.set(r.city.slug, key);
    else byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const keys = [...byKey.keys()];
  const per = opts.perCall ?? 1;
  const calls = Array.from({ length: Math.ceil(keys.length / per) }, (_, i) => keys.slice(i * per, (i + 1) * per));
  await mapLimit(calls, opts.concurrency ?? 1, async (chunk) => {
    const reqs = chunk.flatMap((k) => byKey.get(k)!);
    try {
      const answer = await opts.call(chunk, reqs);
      for (const r of reqs) out.set(r.city.slug, answer(r));
    } catch (err) {
      for (const r of reqs) out.set(r.city.slug, asError(err));
    }
  });
  return out;
}
