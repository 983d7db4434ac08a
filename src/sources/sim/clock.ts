import type { Db } from '../../db/open.ts';
import type { Clock } from '../../lib/clock.ts';

/**
 * The simulated feed's accelerated clock. Simulated weather and market days follow it, so with
 * SIM_SPEED=60 a city-local day passes in 24 real minutes and a demo sees crossings at once;
 * signal timestamps (`observedAt`, `bucketsAsOf`) stay real. The anchor is kept in the database so
 * a restart continues simulated time forward instead of replaying days already signalled; a
 * changed speed re-anchors at the current simulated instant. With SIM_SPEED=1 simulated time is
 * real time.
 */
export function createSimClock(db: Db, opts: { speed: number; real: Clock }): Clock {
  const realNow = opts.real.now();
  const anchor = db.transaction(() => {
    const row = db
      .prepare('SELECT real_anchor_ms AS realMs, sim_anchor_ms AS simMs, speed FROM sim_clock WHERE id = 1')
      .get() as { realMs: number; simMs: number; speed: number } | undefined;
    if (row && row.speed === opts.speed) return row;
    const simMs = row ? Math.round(row.simMs + Math.max(0, realNow - row.realMs) * row.speed) : realNow;
    const next = { realMs: realNow, simMs, speed: opts.speed };
    db.prepare(`INSERT INTO sim_clock (id, real_anchor_ms, sim_anchor_ms, speed) VALUES (1, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET real_anchor_ms = excluded.real_anchor_ms, sim_anchor_ms = excluded.sim_anchor_ms, speed = excluded.speed`).run(
      next.realMs,
      next.simMs,
      next.speed,
    );
    return next;
  })();
  return { now: () => Math.round(anchor.simMs + Math.max(0, opts.real.now() - anchor.realMs) * anchor.speed) };
}
