import type { Catalog } from '../cities/catalog.ts';
import type { Backoff } from './backoff.ts';

/** What the operator page shows per city before its first poll; times in epoch ms of the poller's clock. */
const NEVER_POLLED = {
  lastAttemptAtMs: null as number | null,
  lastOkAtMs: null as number | null,
  lastError: null as string | null,
  lastErrorAtMs: null as number | null,
  /** The last attempt found no market event for the city's day. */
  noMarket: false,
  /** Why the city's current day is paused (its rule does not match the catalog); null when not paused. */
  paused: null as string | null,
};
type CityMemo = typeof NEVER_POLLED;

export type PollerHealth = {
  lastTick: { startedAtMs: number; durationMs: number; signals: number; errors: number } | null;
  /** `failures`: consecutive failures, 0 when the city is not backing off. */
  cities: ({ city: string } & CityMemo & { failures: number; retryAtMs: number | null })[];
};

/** Failures and retry times come from the backoff, so they are never kept twice. */
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
