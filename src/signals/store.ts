import type { Db } from '../db/open.ts';
import { once } from '../lib/once.ts';
import type { MarketKind, TempUnit } from '../lib/temperature.ts';
import type { MarketBucketRef, OddsSample } from '../sources/market/types.ts';
import { isDead } from '../buckets/labels.ts';
import { detect, type DayState, type Detection } from './detect.ts';
import type { z } from 'zod';
import { signalSchema, SignalProvenance, type SignalPublic } from './schemas.ts';
import type { SignalNotifier } from './notifier.ts';

/** Detection re-runs inside the transaction, so the database alone decides whether a signal exists. */
type ReadingInput = {
  /** `kind` is the stream's: a low market's reading only falls (absent: a daily-high market). */
  city: { slug: string; displayName: string; unit: TempUnit; kind?: MarketKind };
  targetDate: string;
  /** The day's extreme so far (the high, or a low stream's low), whole degrees of the city's unit. */
  reading: number;
  buckets: readonly MarketBucketRef[];
  nowMs: number;
};

type StoreSignalInput = ReadingInput & {
  marketUrl: string;
  /** Event-level id (the neg-risk market id); null falls back to the entered bucket's condition id. */
  conditionId: string | null;
  /** Odds for every bucket, or null when the odds could not be sampled (signal carries `buckets: null`). */
  odds: OddsSample | null;
  source: string;
  observedAtMs: number;
  /** The station's own time of the report that first showed `new.reading`; absent or null when unknown. */
  reportedAtMs?: number | null;
  /** The report that first showed `new.reading`, as the feed gave it; absent: every provenance field null. */
  provenance?: Omit<z.infer<ReturnType<typeof SignalProvenance>>, 'storedAt'>;
};

// Every provenance field null; buildSignal sets storedAt after it.
const noProvenance = once(() => Object.fromEntries(Object.keys(SignalProvenance().shape).map((k) => [k, null])));

type LatestReading = DayState & { targetDate: string; unit: string; updatedAtMs: number };

export type SignalStore = ReturnType<typeof createSignalStore>;

export function createSignalStore(db: Db, notifier: Pick<SignalNotifier, 'committed'>) {
  const state = db.prepare('SELECT high, bucket FROM day_state WHERE city = ? AND target_date = ?');
  const upsert =
    db.prepare(`INSERT INTO day_state (city, target_date, high, unit, bucket, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (city, target_date) DO UPDATE SET high = excluded.high, bucket = excluded.bucket, updated_at = excluded.updated_at`);
  const latest = db.prepare('SELECT coalesce(max(seq), 0) FROM signals WHERE city = +?').pluck();
  const entered = db.prepare('SELECT 1 FROM signals WHERE city = ? AND target_date = ? AND new_bucket = ?').pluck();
  const insert = db.prepare(
    `INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, reported_at, payload, created_at,
      channel, raw_report, reported_value, reported_unit, reported_precision, available_at)
      VALUES (@city, @seq, @targetDate, @newBucket, @observedAt, @reportedAt, @payload, @createdAt,
      @channel, @rawReport, @reportedValue, @reportedUnit, @reportedPrecision, @availableAt)`,
  );
  const readings = db.prepare(`SELECT d.city, d.target_date AS targetDate, d.high, d.unit, d.bucket,
    d.updated_at AS updatedAtMs FROM day_state d WHERE d.target_date = (SELECT max(target_date) FROM day_state x WHERE x.city = d.city)`);

  const writeState = (input: ReadingInput, next: DayState) =>
    upsert.run(input.city.slug, input.targetDate, next.high, input.city.unit, next.bucket, input.nowMs, input.nowMs);
  /** The city's latest seq (0 before its first signal); the entitlement ceiling reads it inside the purchase. */
  const latestSeq = (city: string): number => latest.get(city) as number;
  const detectIn = (input: ReadingInput): Detection =>
    detect((state.get(input.city.slug, input.targetDate) as DayState | undefined) ?? null, input.reading, {
      buckets: input.buckets,
      kind: input.city.kind,
    });

  return {
    latestSeq,
    /** Records a reading that does not cross; on a crossing writes nothing, so the caller samples odds and calls storeSignal. */
    saveReading: (input: ReadingInput): Detection =>
      db.transaction(() => {
        const d = detectIn(input);
        if (d.changed && !d.crossing) writeState(input, d.next);
        return d;
      })(),
    /** One transaction with `hooks.inTransaction` (outbox rows: if it throws, nothing is stored); null for a duplicate. */
    storeSignal: (
      input: StoreSignalInput,
      hooks: { inTransaction?(signal: SignalPublic): void } = {},
    ): SignalPublic | null => {
      const stored = db.transaction((): SignalPublic | null => {
        const d = detectIn(input);
        if (!d.changed) return null;
        // Belt and braces over UNIQUE (city, target_date, new_bucket): a bucket is entered once a day.
        if (!d.crossing || entered.get(input.city.slug, input.targetDate, d.crossing.new.bucket) !== undefined) {
          writeState(input, d.next);
          return null;
        }
        const seq = latestSeq(input.city.slug) + 1;
        const signal = buildSignal(input, d.crossing, seq);
        insert.run({
          ...signal,
          newBucket: signal.new.bucket,
          payload: JSON.stringify(signal),
          createdAt: input.nowMs,
        });
        writeState(input, d.next);
        hooks.inTransaction?.(signal);
        return signal;
      })();
      if (stored) notifier.committed(input.city.slug, stored.seq);
      return stored;
    },
    /** Each city's newest day_state row (the operator page's "last reading"). */
    latestReadings: (): Map<string, LatestReading> =>
      new Map((readings.all() as (LatestReading & { city: string })[]).map(({ city, ...r }) => [city, r])),
  };
}

/** The canonical public signal (spec 2.2) for a crossing; validated so a malformed one never lands. */
function buildSignal(input: StoreSignalInput, crossing: NonNullable<Detection['crossing']>, seq: number): SignalPublic {
  const entered = input.buckets.find((b) => b.label === crossing.new.bucket);
  const unit = input.city.unit;
  const buckets =
    input.odds === null
      ? null
      : input.buckets.map((b) => {
          const o = input.odds!.byLabel.get(b.label);
          if (!o) throw new Error(`odds sample lacks bucket ${b.label}`);
          return {
            label: b.label,
            conditionId: b.conditionId,
            yes: o.yes,
            no: o.no,
            midpoint: o.midpoint,
            ...(isDead(b, crossing.new.reading, input.city.kind) ? { dead: true as const } : {}),
            ...(o.noQuote ? { noQuote: true as const } : {}),
          };
        });
  return signalSchema().parse({
    city: input.city.slug,
    displayName: input.city.displayName,
    seq,
    targetDate: input.targetDate,
    marketUrl: input.marketUrl,
    conditionId: input.conditionId ?? entered?.conditionId,
    old: { reading: crossing.old.reading, unit, bucket: crossing.old.bucket },
    new: { reading: crossing.new.reading, unit, bucket: crossing.new.bucket },
    buckets,
    bucketsAsOf: input.odds === null ? null : new Date(input.odds.asOfMs).toISOString(),
    source: input.source,
    observedAt: new Date(input.observedAtMs).toISOString(),
    reportedAt: input.reportedAtMs == null ? null : new Date(input.reportedAtMs).toISOString(),
    ...(input.provenance ?? noProvenance()),
    storedAt: new Date(input.nowMs).toISOString(),
  });
}
