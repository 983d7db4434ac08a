import type { MarketKind, TempUnit } from '../lib/temperature.ts';
import { wholeDegrees } from './rounding.ts';

/**
 * Market bucket labels (Gamma `groupItemTitle`). Shapes seen on the live markets:
 *   `32-33°F`   a closed range of whole degrees, both ends included (2 °F buckets)
 *   `14°C`, `-2°C`   one whole degree (1 °C buckets)
 *   `27°F or below`, `25°C or below`   open bottom, the end included
 *   `38°F or higher`, `34°C or higher`   open top, the end included
 * A range is held as whole-degree bounds `lo..hi`, inclusive, with -Infinity/Infinity for the open
 * ends, so membership of a resolved (whole-degree) reading is a plain comparison.
 */
export type BucketRange = { label: string; lo: number; hi: number; unit: TempUnit };

const NUM = '(-?\\d{1,3})';
const DEG = '\\s*°\\s*([CF])';
/** Each shape and the bounds its numbers give; the unit is the last group. */
const SHAPES: readonly [RegExp, (m: RegExpExecArray) => [lo: number, hi: number]][] = [
  [new RegExp(`^${NUM}\\s*-\\s*${NUM}${DEG}$`, 'i'), (m) => [Number(m[1]), Number(m[2])]],
  [new RegExp(`^${NUM}${DEG}$`, 'i'), (m) => [Number(m[1]), Number(m[1])]],
  [new RegExp(`^${NUM}${DEG}\\s+or\\s+(?:below|lower|less)$`, 'i'), (m) => [Number.NEGATIVE_INFINITY, Number(m[1])]],
  [new RegExp(`^${NUM}${DEG}\\s+or\\s+(?:higher|above|more)$`, 'i'), (m) => [Number(m[1]), Number.POSITIVE_INFINITY]],
];

/** Hand-typed variants: ordinal º and ring ˚ (escapes: the binary's bundle is ASCII), unicode minus, en dash. */
function normalise(label: string): string {
  return label
    .trim()
    .replace(/[\u00BA\u02DA]/g, '°')
    .replace(/\u2212/g, '-')
    .replace(/[\u2013\u2014]/g, '-')
    .replace(/\s+/g, ' ');
}

export function parseLabel(label: string): BucketRange | null {
  const s = normalise(label);
  for (const [shape, bounds] of SHAPES) {
    const m = shape.exec(s);
    if (!m) continue;
    const [lo, hi] = bounds(m);
    return lo <= hi ? { label, lo, hi, unit: m.at(-1)!.toUpperCase() === 'F' ? 'F' : 'C' } : null;
  }
  return null;
}

/** The market's own spelling of a range. */
export function formatLabel(r: Pick<BucketRange, 'lo' | 'hi' | 'unit'>): string {
  if (r.lo === Number.NEGATIVE_INFINITY) return `${r.hi}°${r.unit} or below`;
  if (r.hi === Number.POSITIVE_INFINITY) return `${r.lo}°${r.unit} or higher`;
  if (r.lo === r.hi) return `${r.lo}°${r.unit}`;
  return `${r.lo}-${r.hi}°${r.unit}`;
}

/** One usable ladder (one unit, no overlap), coldest first, or the reason there is none. */
export function orderBuckets<T extends BucketRange>(
  ranges: readonly T[],
): { ok: true; buckets: T[] } | { ok: false; reason: string } {
  if (ranges.length === 0) return { ok: false, reason: 'no buckets' };
  const unit = ranges[0]!.unit;
  if (ranges.some((r) => r.unit !== unit)) return { ok: false, reason: 'buckets mix units' };
  const sorted = [...ranges].sort((a, b) => a.lo - b.lo || a.hi - b.hi);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.lo <= sorted[i - 1]!.hi)
      return { ok: false, reason: `buckets overlap: ${sorted[i - 1]!.label} and ${sorted[i]!.label}` };
  }
  return { ok: true, buckets: sorted };
}

/** The bucket holding a reading (a fractional one rounded half-up first); null in a gap of the ladder. */
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
