import { formatLabel, parseLabel, type BucketRange } from '../../src/buckets/labels.ts';

/** A °F ladder like the live ones: `N°F or below`, `n` two-degree buckets from `first`, `M°F or higher`. */
export function ladderF(first: number, n = 9): BucketRange[] {
  const ranges = [{ lo: Number.NEGATIVE_INFINITY, hi: first - 1, unit: 'F' as const }];
  for (let i = 0; i < n; i++) ranges.push({ lo: first + 2 * i, hi: first + 2 * i + 1, unit: 'F' });
  ranges.push({ lo: first + 2 * n, hi: Number.POSITIVE_INFINITY, unit: 'F' });
  return ranges.map((r) => parseLabel(formatLabel(r))!);
}
