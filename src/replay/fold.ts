import type { BucketRange } from '../buckets/labels.ts';
import { dailyHighReading, type Observation, type ReadingDay } from '../buckets/daily-high.ts';
import { detect, type DayState, type Detection } from '../signals/detect.ts';

/**
 * A city-day played back as a poller ticking after every observation would have seen it: each
 * step is the poller's own `dailyHighReading` then `detect`, so no rule is re-implemented here.
 */
export type CityDay = ReadingDay;

type FoldStep = {
  atMs: number;
  reading: number;
  detection: Detection;
};

export function foldDay(
  observations: readonly Observation[],
  day: CityDay,
  { buckets, initial = null }: { buckets: readonly BucketRange[]; initial?: DayState | null },
): { steps: FoldStep[]; state: DayState | null } {
  const sorted = [...observations].sort((a, b) => a.atMs - b.atMs);
  const steps: FoldStep[] = [];
  let state = initial;
  for (let i = 0; i < sorted.length; i++) {
    const atMs = sorted[i]!.atMs;
    // Reports sharing one instant (a METAR and its SPECI) arrive together, as in one poll.
    if (i + 1 < sorted.length && sorted[i + 1]!.atMs === atMs) continue;
    const reading = dailyHighReading(sorted.slice(0, i + 1), day);
    if (reading === null) continue;
    const detection = detect(state, reading, { buckets, kind: day.extreme });
    if (!detection.changed) continue;
    steps.push({ atMs, reading, detection });
    state = detection.next;
  }
  return { steps, state };
}
