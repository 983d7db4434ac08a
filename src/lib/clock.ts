/** Time source. Pure logic takes a Clock (or a plain `nowMs`) so tests can pin the instant. */
export type Clock = { now(): number };

export const systemClock: Clock = { now: () => Date.now() };

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
