import type { Catalog } from '../cities/catalog.ts';
import type { Logger } from '../lib/logger.ts';
import { decideDiscovered } from '../resolution/discover.ts';
import { groupByReason, reasonLine, type DiscoveryStore } from '../resolution/discovery-store.ts';
import type { ObservableSource } from '../resolution/judge.ts';
import type { DiscoveredEvent } from '../sources/market/discovery.ts';

/** Where discovered events come from: Gamma by tag slug (live), or the simulated market's events. */
export type DiscoverySource = { list(): Promise<DiscoveredEvent[]> };

/** After a failed run, the next try comes sooner than the interval, but not on every tick. */
const RETRY_MS = 5 * 60_000;

/**
 * Runs discovery when due, at the start of a poller tick: reads every daily-high event, decides
 * what to serve (src/resolution/discover.ts), serves the new cities (each starts its own seq at 1:
 * a city's seq is per city) and records the run for doctor and /admin. A failed run changes
 * nothing served: cities once served stay served for the life of the process.
 */
export function createDiscoveryRun(deps: {
  store: DiscoveryStore;
  catalog: Catalog;
  logger: Logger;
  source: DiscoverySource;
  intervalMs: number;
  canObserve(source: ObservableSource): boolean;
}) {
  const { store } = deps;
  let nextAtMs = 0;
  return async function maybeRun(nowMs: number): Promise<void> {
    if (nowMs < nextAtMs) return;
    let events: DiscoveredEvent[];
    try {
      events = await deps.source.list();
    } catch (err) {
      nextAtMs = nowMs + Math.min(RETRY_MS, deps.intervalMs);
      deps.logger.warn('discovery failed', { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    nextAtMs = nowMs + deps.intervalMs;
    const verdicts = decideDiscovered(events, deps.catalog, deps.canObserve);
    const added: string[] = [];
    for (const v of verdicts) if (v.served && v.record && deps.catalog.serve(v.record)) added.push(v.city);
    store.replace(verdicts, nowMs);
    const left = verdicts
      .filter((v) => !v.served && !deps.catalog.get(v.city))
      .map((v) => ({ city: v.city, reason: v.reason ?? 'not served' }));
    const groups = groupByReason(left);
    // One field per reason ("31 streams: ...: amsterdam, ..."), not one entry per event.
    deps.logger.info('discovery', {
      events: verdicts.length,
      served: deps.catalog.active.length,
      newlyServed: added,
      notServed: groups.reduce((n, g) => n + g.count, 0),
      notServedByReason: groups.map(reasonLine),
    });
  };
}
