import type { BucketRange } from './labels.ts';
import { wholeDegrees } from './rounding.ts';

/**
 * The bucket holding a resolved reading (whole degrees of the buckets' unit; a fractional reading
 * is rounded by the half-up rule first). Null when the ladder has a gap at that reading.
 */
export function bucketFor<T extends Pick<BucketRange, 'lo' | 'hi'>>(reading: number, buckets: readonly T[]): T | null {
  const r = wholeDegrees(reading);
  for (const b of buckets) if (r >= b.lo && r <= b.hi) return b;
  return null;
}

/**
 * A bucket is dead when the day's high has passed its top: the high never goes down, so the day
 * can no longer resolve into it. The bucket holding the high, and all above, stay reachable.
 */
export function isDead(bucket: Pick<BucketRange, 'hi'>, high: number): boolean {
  return bucket.hi < wholeDegrees(high);
}
