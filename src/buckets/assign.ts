import type { MarketKind } from '../lib/temperature.ts';
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

/** Dead: wholly passed by the day's running extreme (below a high, above a low), so out of reach. */
export function isDead(bucket: Pick<BucketRange, 'lo' | 'hi'>, reading: number, kind: MarketKind = 'high'): boolean {
  const r = wholeDegrees(reading);
  return kind === 'high' ? bucket.hi < r : bucket.lo > r;
}
