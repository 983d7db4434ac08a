import type { Db } from '../../db/open.ts';
import type { Clock } from '../../lib/clock.ts';

/**
 * The simulated feed's accelerated clock. Simulated weather and market days follow it, so with
 * SIM_SPEED=60 a city-local day passes in 24 real minutes; signal timestamps (`observedAt`,
 * `bucketsAsOf`) stay real. The anchor is kept in the database so a restart continues simulated
 * time forward instead of replaying days already signalled; a changed speed re-anchors at the
 * current simulated instant. With SIM_SPEED=1 simulated time is real time.
 *
 * A fresh database can start with a warm-up (`warmUpRealMs`): the first simulated day passes in
 * that much real time, then SIM_SPEED takes over. A city's daily high only moves between about
 * 09:20 and 15:00 local, so at 60x a city that had just passed its afternoon when the demo
 * started waited 18 real minutes for its first signal; the warm-up walks every city through its
 * afternoon within the first few minutes. It needs no extra column: the stored anchor is the
 * instant the warm-up ends (in the future at first), and before it simulated time is the line
 * through the anchor at the warm-up's speed, which passes through (start, start).
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

/**
 * The real instant at which simulated time showed `simMs`, never after `realNow`. A simulated
 * station's report is stamped in simulated time, hours ahead of the real clock; a signal's
 * `reportedAt` is this, so it is never after the `observedAt` at which we received the report.
 * Reports from before the current anchor (an earlier run at another speed) are placed on the
 * current line (extrapolated at the current speed) and clamped to `realNow`.
 */
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
