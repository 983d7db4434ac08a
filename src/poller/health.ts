import type { Catalog } from '../cities/catalog.ts';
import type { Backoff } from './backoff.ts';

/** What the operator page shows per city; times in epoch ms of the poller's clock. */
type CityPollHealth = {
  city: string;
  lastAttemptAtMs: number | null;
  lastOkAtMs: number | null;
  lastError: string | null;
  lastErrorAtMs: number | null;
  /** Consecutive failures; 0 when the city is not backing off. */
  failures: number;
  retryAtMs: number | null;
  /** The last attempt found no market event for the city's day. */
  noMarket: boolean;
  /** Why the city's current day is paused (its rule does not match the catalog); null when not paused. */
  paused: string | null;
};

export type PollerHealth = {
  lastTick: { startedAtMs: number; durationMs: number; signals: number; errors: number } | null;
  cities: CityPollHealth[];
};

type CityMemo = Omit<CityPollHealth, 'city' | 'failures' | 'retryAtMs'>;

const NEVER_POLLED: Readonly<CityMemo> = {
  lastAttemptAtMs: null,
  lastOkAtMs: null,
  lastError: null,
  lastErrorAtMs: null,
  noMarket: false,
  paused: null,
};

/**
 * The poller's in-memory record since start, per city (last attempt, success, error, market and
 * pause state) and of the last tick; failures and retry times come from the backoff, so they are
 * never kept twice.
 */
export function createPollHealth(catalog: Catalog, backoff: Backoff) {
  const memo = new Map<string, CityMemo>();
  let lastTick: PollerHealth['lastTick'] = null;
  const of = (slug: string): CityMemo => {
    let m = memo.get(slug);
    if (!m) {
      m = { ...NEVER_POLLED };
      memo.set(slug, m);
    }
    return m;
  };
  return {
    /** The city's mutable record (created on first use). */
    of,
    tickDone: (tick: NonNullable<PollerHealth['lastTick']>) => {
      lastTick = tick;
    },
    snapshot: (): PollerHealth => ({
      lastTick,
      cities: catalog.active.map((c) => {
        const b = backoff.state(c.slug);
        return {
          city: c.slug,
          ...(memo.get(c.slug) ?? NEVER_POLLED),
          failures: b?.failures ?? 0,
          retryAtMs: b?.retryAtMs ?? null,
        };
      }),
    }),
  };
}
