/**
 * Seeds a data directory for the read benchmarks through the real write path (saveReading and
 * storeSignal, the poller's own calls): `days` past market days for one city, each rising
 * through eight buckets of an 11-bucket ladder with odds for every bucket, so every stored signal
 * has the full public shape a live one has.
 */
import { createHash } from 'node:crypto';
import { createCatalog } from '../../src/cities/catalog.ts';
import { addDays } from '../../src/lib/local-day.ts';
import { eventSlugs, eventUrl } from '../../src/cities/market-slug.ts';
import { openDb } from '../../src/db/open.ts';
import { simLadder } from '../../src/sources/market/sim.ts';
import type { BucketOdds } from '../../src/sources/market/types.ts';
import { createStores } from '../../src/stores.ts';

const id = (...parts: string[]) => '0x' + createHash('sha256').update(parts.join('|')).digest('hex');

/** Returns the number of signals the city has afterwards. */
export function seedSignals(dbPath: string, opts: { city: string; days: number }): number {
  const city = createCatalog().get(opts.city);
  if (!city) throw new Error(`unknown city ${opts.city}`);
  const db = openDb(dbPath);
  try {
    const w = city.bucketWidth;
    let date = '2024-01-01';
    const t0 = Date.parse('2024-01-01T15:00:00Z');
    for (let d = 0; d < opts.days; d++, date = addDays(date, 1)) {
      const ladder = simLadder(city, 20);
      const buckets = ladder.map((b) => ({ ...b, conditionId: id('condition', city.slug, date, b.label) }));
      const first = ladder[1]!.lo;
      const nowMs = t0 + d * 86_400_000;
      const base = { city, targetDate: date, buckets, nowMs };
      createStores(db).signals.saveReading({ ...base, reading: first });
      for (let k = 1; k <= 8; k++) {
        const reading = first + k * w;
        const byLabel = new Map<string, BucketOdds>(
          ladder.map((b, i) => {
            const yes = Math.round((b.hi < reading ? 0.001 : 0.9 / (1 + Math.abs(i - k - 1))) * 1000) / 1000;
            return [b.label, { yes, no: Math.round((1 - yes) * 1000) / 1000, midpoint: yes }];
          }),
        );
        createStores(db).signals.storeSignal({
          ...base,
          reading,
          nowMs: nowMs + k * 600_000,
          marketUrl: eventUrl(eventSlugs(city.marketToken, date).withYear),
          conditionId: id('negrisk', city.slug, date),
          odds: { asOfMs: nowMs + k * 600_000 + 1_500, byLabel },
          source: 'wu',
          observedAtMs: nowMs + k * 600_000,
        });
      }
    }
    return db.prepare('SELECT count(*) FROM signals WHERE city = ?').pluck().get(city.slug) as number;
  } finally {
    db.close();
  }
}
