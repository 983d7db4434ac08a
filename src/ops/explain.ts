import { convertTemp } from '../buckets/rounding.ts';
import type { Db } from '../db/open.ts';
import { createDaySignals } from '../signals/read-store.ts';
import type { SignalPublic } from '../signals/schemas.ts';

/** `isocast explain`: rows as stored, nothing recomputed, so the answer is what was sent. */
export const EXPLAIN_USAGE = 'usage: isocast explain <city> <YYYY-MM-DD> [--json] [flags]';

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The city and market day, or the problem with them (exit 2). Other flags are the data directory's. */
export function explainArgs(args: readonly string[]) {
  const json = args.includes('--json');
  const [city, date, ...rest] = args.filter((a) => a !== '--json');
  if (!city || city.startsWith('-') || !date || date.startsWith('-')) return { problem: EXPLAIN_USAGE };
  if (!SLUG.test(city)) return { problem: `not a city slug: ${JSON.stringify(city)}` };
  if (!DATE.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || !sameDay(date))
    return { problem: `not a date (YYYY-MM-DD): ${JSON.stringify(date)}` };
  return { city, date, json, rest };
}

const sameDay = (date: string) => new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) === date;

export function readDay(db: Db, { city, date }: { city: string; date: string }) {
  return createDaySignals(db)(city, date).map((r) => ({
    seq: r.seq,
    createdAt: r.createdAt,
    signal: JSON.parse(r.payload) as Partial<SignalPublic> & Pick<SignalPublic, 'seq'>,
  }));
}

type DayRows = ReturnType<typeof readDay>;

// Anything from outside (a raw report, a bucket label) is printed without terminal controls.
const clean = (v: unknown) => String(v).replace(/\p{Cc}/gu, '?');

function step(fromIso: string | null | undefined, toIso: string | null | undefined): string {
  if (!fromIso || !toIso) return '';
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  const abs = Math.abs(ms);
  const text =
    abs < 1_000
      ? `${abs} ms`
      : abs < 60_000
        ? `${(abs / 1000).toFixed(1)} s`
        : `${Math.floor(abs / 60_000)} min ${Math.round((abs % 60_000) / 1000)} s`;
  return `${ms < 0 ? '-' : '+'}${text}`;
}

function valueLine(s: DayRows[number]['signal']): string {
  if (s.reportedValue == null || !s.reportedUnit) return 'not recorded (signal stored before provenance)';
  const precision =
    s.reportedPrecision === 0.1 ? 'tenths' : s.reportedPrecision === 1 ? 'whole degrees' : 'precision unknown';
  const unit = s.new?.unit;
  const converted =
    unit && unit !== s.reportedUnit && (unit === 'C' || unit === 'F')
      ? ` = ${Math.round(convertTemp(s.reportedValue, s.reportedUnit, unit) * 100) / 100} °${unit}`
      : '';
  const value = s.reportedPrecision === 0.1 ? s.reportedValue.toFixed(1) : String(s.reportedValue);
  return `${value} °${s.reportedUnit} (${precision})${converted} -> reading ${s.new?.reading ?? '?'} °${unit ?? '?'}`;
}

function oddsLines(s: DayRows[number]['signal']): string[] {
  if (!s.buckets) return ['  odds      none (the ladder could not be priced within 10 s; sent with buckets: null)'];
  return [
    `  odds      at ${s.bucketsAsOf ?? '?'}`,
    ...s.buckets.map(
      (b) =>
        `    ${clean(b.label).padEnd(16)} yes ${b.yes.toFixed(3)}  no ${b.no.toFixed(3)}  mid ${b.midpoint.toFixed(3)}` +
        `${b.dead ? '  dead' : ''}${b.noQuote ? '  no quote' : ''}${b.label === s.new?.bucket ? '  <- entered' : ''}`,
    ),
  ];
}

function timeLines(s: DayRows[number]['signal'], createdAt: number): string[] {
  const stored = s.storedAt ?? new Date(createdAt).toISOString();
  const rows: [string, string | null | undefined, string][] = [
    ['reported', s.reportedAt, "the station's report time"],
    ['available', s.availableAt, "the source's receipt time"],
    ['observed', s.observedAt, 'our poll saw it'],
    ['odds', s.bucketsAsOf, 'odds sampled'],
    ['stored', stored, 'committed'],
  ];
  let prev: string | null | undefined = null;
  return rows.map(([name, at, what]) => {
    const line = `    ${name.padEnd(10)} ${(at ?? '-').padEnd(24)} ${at ? step(prev, at).padEnd(14) : ''.padEnd(14)} ${what}`;
    if (at) prev = at;
    return line.trimEnd();
  });
}

export function formatExplain(rows: DayRows, { city, date }: { city: string; date: string }): string {
  if (rows.length === 0) return `${city} ${date}: no signals stored for this city and market day\n`;
  const blocks = rows.map(({ signal: s, createdAt }) => {
    const head = `#${s.seq}  ${clean(s.old?.bucket ?? '(none)')} -> ${clean(s.new?.bucket ?? '?')}   reading ${s.old?.reading ?? '?'} -> ${s.new?.reading ?? '?'} °${s.new?.unit ?? '?'}`;
    return [
      head,
      `  source    ${clean(s.source ?? '?')} via ${clean(s.channel ?? 'unknown channel')}`,
      `  report    ${s.rawReport ? clean(s.rawReport) : '(no report text from this source)'}`,
      `  value     ${valueLine(s)}`,
      `  market    ${clean(s.marketUrl ?? '?')}  (${clean(s.conditionId ?? '?')})`,
      ...oddsLines(s),
      '  times',
      ...timeLines(s, createdAt),
    ].join('\n');
  });
  const name = rows[0]!.signal.displayName ? ` (${clean(rows[0]!.signal.displayName)})` : '';
  return `${city}${name} ${date}: ${rows.length} signal(s)\n\n${blocks.join('\n\n')}\n`;
}
