import type { Db } from '../../src/db/open.ts';
import { signalSchema, type SignalPublic } from '../../src/signals/schemas.ts';

/**
 * Inserts valid IsocastSignalPublic rows for a city straight into the signals table, continuing
 * from the city's current latest seq. Paid-plane tests use it instead of running the poller.
 */
export function signalPayload(city: string, seq: number): SignalPublic {
  const low = 40 + 2 * seq;
  return signalSchema().parse({
    city,
    displayName: city.toUpperCase(),
    seq,
    targetDate: '2026-07-15',
    marketUrl: `https://polymarket.com/event/highest-temperature-in-${city}-on-july-15-2026`,
    conditionId: '0x' + seq.toString(16).padStart(64, '0'),
    old: { reading: low - 1, unit: 'F', bucket: `${low - 2}-${low - 1}°F` },
    new: { reading: low, unit: 'F', bucket: `${low}-${low + 1}°F` },
    buckets: [
      { label: `${low}-${low + 1}°F`, conditionId: '0x' + 'ab'.repeat(32), yes: 0.4, no: 0.61, midpoint: 0.395 },
    ],
    bucketsAsOf: '2026-07-15T15:00:02.000Z',
    source: 'wu',
    observedAt: '2026-07-15T15:00:00.000Z',
    reportedAt: '2026-07-15T14:51:00.000Z',
    channel: 'wu',
    rawReport: null,
    reportedValue: low,
    reportedUnit: 'F',
    reportedPrecision: 1,
    availableAt: null,
    storedAt: '2026-07-15T15:00:02.500Z',
  });
}

export function insertSignals(db: Db, city: string, n: number): number {
  const latest = db.prepare('SELECT coalesce(max(seq), 0) FROM signals WHERE city = ?').pluck().get(city) as number;
  const insert = db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let seq = latest + 1; seq <= latest + n; seq++) {
      const p = signalPayload(city, seq);
      insert.run(city, seq, p.targetDate, p.new.bucket, p.observedAt, JSON.stringify(p), Date.now());
    }
  })();
  return latest + n;
}
