import { parseLabel } from '../../src/buckets/labels.ts';
import type { CityRecord } from '../../src/cities/catalog.ts';
import type { SignalStore } from '../../src/signals/store.ts';
import type { SignalPublic } from '../../src/signals/schemas.ts';
import type { MarketBucketRef } from '../../src/sources/market/types.ts';

type StoreSignalInput = Parameters<SignalStore['storeSignal']>[0];

/** A 2 °F ladder from 40 to 140 °F, so readings climbing by 2 cross a bucket each time. */
const LADDER: MarketBucketRef[] = [
  '39°F or below',
  ...Array.from({ length: 50 }, (_, i) => `${40 + 2 * i}-${41 + 2 * i}°F`),
  '140°F or higher',
].map((label, i) => ({ ...parseLabel(label)!, conditionId: `0x${String(i + 1).padStart(64, '0')}` }));

/**
 * Commits signals through the real write path (signals/store.ts storeSignal, the poller's), so
 * whatever the store does after a commit (the long-poll notifier) runs as in `serve`. The first
 * call stores the day's baseline reading; every `next()` then crosses into the next bucket.
 */
export function crossings(
  signals: Pick<SignalStore, 'storeSignal'>,
  city: Pick<CityRecord, 'slug' | 'displayName' | 'unit'>,
  startMs: number,
) {
  let reading = 40;
  let nowMs = startMs;
  const input = (r: number): StoreSignalInput => {
    nowMs += 1_000;
    return {
      city: { slug: city.slug, displayName: city.displayName, unit: city.unit },
      targetDate: '2026-07-15',
      reading: r,
      buckets: LADDER,
      nowMs,
      marketUrl: `https://polymarket.com/event/highest-temperature-in-${city.slug}-on-july-15-2026`,
      conditionId: `0x${'cd'.repeat(32)}`,
      odds: { asOfMs: nowMs, byLabel: new Map(LADDER.map((b) => [b.label, { yes: 0.1, no: 0.9, midpoint: 0.1 }])) },
      source: 'metar',
      observedAtMs: nowMs,
    };
  };
  signals.storeSignal(input(reading));
  return {
    next(): SignalPublic {
      reading += 2;
      const s = signals.storeSignal(input(reading));
      if (!s) throw new Error(`reading ${reading} stored no signal`);
      return s;
    },
  };
}
