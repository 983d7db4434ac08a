import type { Db } from '../../db/open.ts';
import type { Clock } from '../../lib/clock.ts';

/**
 * The anchor is stored so a restart continues forward instead of replaying days already signalled.
 * The warm-up exists because a high only moves 09:20-15:00 local: a city past its afternoon waited
 * 18 real minutes for a first signal. The stored anchor is where the warm-up ends (no extra column).
 */
export const DAY_MS = 86_400_000;

type Anchor = { realMs: number; simMs: number; speed: number };

function simAt(a: Anchor, realMs: number): number {
  if (realMs >= a.realMs) return Math.round(a.simMs + (realMs - a.realMs) * a.speed);
  // Before the anchor: inside a warm-up, whose line started one simulated day before the anchor at
  // simulated = real. (A wall clock set back before an ordinary anchor lands here too.)
  const realStart = a.simMs - DAY_MS;
  if (realMs <= realStart) return realStart;
  return Math.round(realStart + ((realMs - realStart) * DAY_MS) / (a.realMs - realStart));
}

/** The real instant simulated time showed `simMs`, clamped to `realNow`: `reportedAt` is never after `observedAt`. */
function realAt(a: Anchor, simMs: number, realNow: number): number {
  const realStart = a.simMs - DAY_MS;
  const inWarmUp = realNow < a.realMs && realNow > realStart;
  const r = inWarmUp
    ? realStart + ((simMs - realStart) * (a.realMs - realStart)) / DAY_MS
    : a.realMs + (simMs - a.simMs) / a.speed;
  return Math.round(Math.min(realNow, r));
}

export type SimClock = Clock & { realAt(simMs: number): number };

export function createSimClock(db: Db, opts: { speed: number; real: Clock; warmUpRealMs?: number }): SimClock {
  const realNow = opts.real.now();
  const warmUp = Math.max(0, opts.warmUpRealMs ?? 0);
  const anchor = db.transaction(() => {
    const row = db
      .prepare('SELECT real_anchor_ms AS realMs, sim_anchor_ms AS simMs, speed FROM sim_clock WHERE id = 1')
      .get() as Anchor | undefined;
    if (row && row.speed === opts.speed) return row;
    const next: Anchor = row
      ? { realMs: Math.max(realNow, row.realMs), simMs: simAt(row, Math.max(realNow, row.realMs)), speed: opts.speed }
      : warmUp > 0
        ? { realMs: realNow + warmUp, simMs: realNow + DAY_MS, speed: opts.speed }
        : { realMs: realNow, simMs: realNow, speed: opts.speed };
    db.prepare(`INSERT INTO sim_clock (id, real_anchor_ms, sim_anchor_ms, speed) VALUES (1, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET real_anchor_ms = excluded.real_anchor_ms, sim_anchor_ms = excluded.sim_anchor_ms, speed = excluded.speed`).run(
      next.realMs,
      next.simMs,
      next.speed,
    );
    return next;
  })();
  return { now: () => simAt(anchor, opts.real.now()), realAt: (simMs) => realAt(anchor, simMs, opts.real.now()) };
}
