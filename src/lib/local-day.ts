/** A market day is the city's local date: 23, 24 or 25 UTC hours around daylight-saving changes. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const WALL = {
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
} as const;

/** One formatter per zone and style, kept: building one costs far more than using it. */
function formatter(timeZone: string, last: 'second' | 'offset' = 'second'): Intl.DateTimeFormat {
  const key = `${timeZone} ${last}`;
  let f = formatters.get(key);
  if (!f) {
    const shown = last === 'second' ? { second: '2-digit' as const } : { timeZoneName: 'shortOffset' as const };
    f = new Intl.DateTimeFormat('en-CA', { timeZone, ...WALL, ...shown });
    formatters.set(key, f);
  }
  return f;
}

/** `2026-11-01 01:30 GMT-4`: date, wall time and the offset then in force (tells the two 01:30s apart). */
export function localTime(timeZone: string, ms: number): string {
  const p: Record<string, string> = {};
  for (const part of formatter(timeZone, 'offset').formatToParts(ms)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${p.timeZoneName === 'GMT' ? 'GMT+0' : p.timeZoneName}`;
}

type Parts = { year: number; month: number; day: number; hour: number; minute: number; second: number };

function partsAt(timeZone: string, ms: number): Parts {
  // The formatter's parts are exactly these six fields (and literals).
  const out: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(ms)) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out as Parts;
}

export function localDate(timeZone: string, ms: number): string {
  const p = partsAt(timeZone, ms);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/** Offset of the zone from UTC at the instant, in ms (east positive). */
export function zoneOffsetMs(timeZone: string, ms: number): number {
  const p = partsAt(timeZone, ms);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** First instant of the local date: after a skipped midnight (spring forward at 00:00), the first that exists. */
function startOfLocalDay(timeZone: string, date: string): number {
  const [y, m, d] = parseDate(date);
  const wallMidnight = Date.UTC(y, m - 1, d);
  // Try the offsets in force around that wall time; one of them maps back to the same date.
  let best = Number.POSITIVE_INFINITY;
  for (const probe of [wallMidnight - 36 * 3600_000, wallMidnight, wallMidnight + 36 * 3600_000]) {
    const candidate = wallMidnight - zoneOffsetMs(timeZone, probe);
    if (localDate(timeZone, candidate) === date && candidate < best) best = candidate;
  }
  if (best === Number.POSITIVE_INFINITY) {
    // Midnight skipped: walk forward minute by minute from the earliest guess (at most a few hours).
    let t = wallMidnight - 14 * 3600_000;
    while (localDate(timeZone, t) < date) t += 60_000;
    return t;
  }
  // Step back while the previous minute still belongs to the date (guards odd historic offsets).
  while (localDate(timeZone, best - 60_000) === date) best -= 60_000;
  return best;
}

/** Half-open UTC span [start, end) of the local date. */
export function localDayBounds(timeZone: string, date: string): { startMs: number; endMs: number } {
  return { startMs: startOfLocalDay(timeZone, date), endMs: startOfLocalDay(timeZone, addDays(date, 1)) };
}

export function addDays(date: string, n: number): string {
  const [y, m, d] = parseDate(date);
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}

/** A real calendar date: 2026-02-30 comes back from the calendar as another. */
export function isValidDate(date: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) && addDays(date, 0) === date;
}

function parseDate(date: string): [number, number, number] {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}
