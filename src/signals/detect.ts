import { bucketFor } from '../buckets/assign.ts';
import type { BucketRange } from '../buckets/labels.ts';
import type { MarketKind } from '../lib/temperature.ts';

/**
 * Crossing detection, pure. A day's state is the running extreme seen so far (the highest
 * resolved reading for a high market, the lowest for a low one; the `high` field and the
 * `day_state.high` column hold either) and the bucket holding it. A high never goes down and a
 * low never goes up, so the bucket only ever moves one way and each bucket can be entered at
 * most once a day.
 */
export type DayState = { high: number; bucket: string | null };

type Crossing = {
  old: { reading: number; bucket: string | null };
  new: { reading: number; bucket: string };
};

export type Detection = {
  /** State after this reading; equal to the input state when nothing changed. */
  next: DayState;
  /** True when `next` differs from the input (something to write). */
  changed: boolean;
  /** The first reading of the day is the baseline: it sets the state and never emits. */
  baseline: boolean;
  crossing: Crossing | null;
};

/** The day's bucket ladder and the market's direction (default 'high'). */
type Ladder = { buckets: readonly BucketRange[]; kind?: MarketKind };

/**
 * `reading` is the day's extreme so far in whole degrees of the buckets' unit. A reading outside
 * the ladder (a gap) moves the extreme but keeps the last bucket, and emits nothing; entering a
 * bucket later still emits from the last known one. For a low market (`kind` 'low') only a lower
 * reading moves anything.
 */
export function detect(state: DayState | null, reading: number, { buckets, kind = 'high' }: Ladder): Detection {
  if (state === null) {
    const next = { high: reading, bucket: bucketFor(reading, buckets)?.label ?? null };
    return { next, changed: true, baseline: true, crossing: null };
  }
  if (kind === 'high' ? reading <= state.high : reading >= state.high)
    return { next: state, changed: false, baseline: false, crossing: null };
  const bucket = bucketFor(reading, buckets)?.label ?? null;
  if (bucket === null || bucket === state.bucket) {
    return { next: { high: reading, bucket: state.bucket }, changed: true, baseline: false, crossing: null };
  }
  return {
    next: { high: reading, bucket },
    changed: true,
    baseline: false,
    crossing: { old: { reading: state.high, bucket: state.bucket }, new: { reading, bucket } },
  };
}
