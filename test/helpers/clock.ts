import type { Clock } from '../../src/lib/clock.ts';

/** A clock tests can move by hand. */
export function manualClock(startMs: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let t = startMs;
  return {
    now: () => t,
    set: (ms) => {
      t = ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}
