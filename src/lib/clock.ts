/** Time source. Pure logic takes a Clock (or a plain `nowMs`) so tests can pin the instant. */
export type Clock = { now(): number };

export const systemClock: Clock = { now: () => Date.now() };
