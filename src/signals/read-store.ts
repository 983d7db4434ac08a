import type { Db } from '../db/open.ts';

/**
 * Read side of the signals table shared by the free and paid routes. Statements are prepared once
 * per database handle.
 */
export type SignalReader = {
  latestSeq(city: string): number;
  latestSeqAll(): Map<string, number>;
  /** Stored public JSON of one signal, or null. */
  payload(city: string, seq: number): string | null;
  /** Stored public JSON of signals with since < seq <= ceiling, ascending, at most `limit`. */
  range(city: string, since: number, ceiling: number, limit: number): string[];
  /** Like range, with each row's seq (for cursors) beside its stored JSON. */
  page(city: string, since: number, ceiling: number, limit: number): { seq: number; payload: string }[];
};

export function createSignalReader(db: Db): SignalReader {
  const latest = db.prepare('SELECT coalesce(max(seq), 0) AS n FROM signals WHERE city = ?').pluck();
  const latestAll = db.prepare('SELECT city, max(seq) AS n FROM signals GROUP BY city');
  const one = db.prepare('SELECT payload FROM signals WHERE city = ? AND seq = ?').pluck();
  const range = db.prepare('SELECT payload FROM signals WHERE city = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?').pluck();
  const page = db.prepare('SELECT seq, payload FROM signals WHERE city = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?');
  return {
    latestSeq: (city) => latest.get(city) as number,
    latestSeqAll: () => new Map((latestAll.all() as { city: string; n: number }[]).map((r) => [r.city, r.n])),
    payload: (city, seq) => (one.get(city, seq) as string | undefined) ?? null,
    range: (city, since, ceiling, limit) => range.all(city, since, ceiling, limit) as string[],
    page: (city, since, ceiling, limit) => page.all(city, since, ceiling, limit) as { seq: number; payload: string }[],
  };
}
