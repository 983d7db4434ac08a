import type { Db } from '../db/open.ts';
import { addDays } from '../lib/local-day.ts';
import { createRuleStore } from './store.ts';

/** `doctor`: city-days paused since yesterday (UTC). A warning: the service runs, those days get no signals. */
export function resolutionCheck(db: Db, nowMs: number): { status: 'ok' | 'warn'; detail: string } {
  const since = addDays(new Date(nowMs).toISOString().slice(0, 10), -1);
  const paused = createRuleStore(db).paused(since, 50);
  if (paused.length === 0) return { status: 'ok', detail: `no city paused since ${since}` };
  const list = paused.map((p) => `${p.city} ${p.targetDate}: ${p.reason ?? 'paused'}`).join('; ');
  return { status: 'warn', detail: `${paused.length} city-day(s) paused (no signals): ${list}` };
}
