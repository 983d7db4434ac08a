import type { Db } from '../db/open.ts';
import { addDays } from '../lib/local-day.ts';
import { createRuleStore } from './store.ts';

/**
 * The `doctor` line for paused cities: every city-day from yesterday (UTC) on whose market rule
 * does not match the catalog or cannot be observed. A pause is a warning, not a failure: the
 * service runs, those cities just get no signals that day.
 */
export function resolutionCheck(db: Db, nowMs: number): { status: 'ok' | 'warn'; detail: string } {
  const since = addDays(new Date(nowMs).toISOString().slice(0, 10), -1);
  const paused = createRuleStore(db).paused(since, 50);
  if (paused.length === 0) return { status: 'ok', detail: `no city paused since ${since}` };
  const list = paused.map((p) => `${p.city} ${p.targetDate}: ${p.reason ?? 'paused'}`).join('; ');
  return { status: 'warn', detail: `${paused.length} city-day(s) paused (no signals): ${list}` };
}
