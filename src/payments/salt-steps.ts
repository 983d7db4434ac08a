import type { Db } from '../db/open.ts';
import { FIRST_STEP, SALT_STEPS_CHECKED, type SaltStep } from './binding.ts';

/** The read side of `salt_steps`: only the trigger that marks a payment settled writes it, in that statement. */
export function createSaltSteps(db: Db) {
  const recent = db.prepare(
    'SELECT k, since AS sinceMs FROM salt_steps WHERE city = +? AND count = +? ORDER BY k DESC LIMIT +?',
  );
  return {
    current: (city: string, count: number): SaltStep =>
      (recent.get(city, count, 1) as SaltStep | undefined) ?? FIRST_STEP,
    /** The newest steps, newest first, ending with k = 0 when the history still reaches it. */
    recent(city: string, count: number): SaltStep[] {
      const rows = recent.all(city, count, SALT_STEPS_CHECKED) as SaltStep[];
      if (rows.length < SALT_STEPS_CHECKED && (rows.at(-1)?.k ?? 1) === 1) rows.push(FIRST_STEP);
      return rows;
    },
  };
}
