import { bucketFor, type BucketRange } from '../buckets/labels.ts';
import type { MarketKind } from '../lib/temperature.ts';

/** The day's running extreme (`high` holds a low's low too) and its bucket; a bucket is entered at most once a day. */
export type DayState = { high: number; bucket: string | null };

export type Detection = {
  next: DayState;
  changed: boolean;
  /** The first reading of the day is the baseline: it sets the state and never emits. */
  baseline: boolean;
  crossing: { old: { reading: number; bucket: string | null }; new: { reading: number; bucket: string } } | null;
};

type Ladder = { buckets: readonly BucketRange[]; kind?: MarketKind };

/**
 * `reading`: the day's extreme so far, whole degrees. A reading in a gap of the ladder moves the
 * extreme but keeps the last bucket and emits nothing; a later bucket emits from the last known one.
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
