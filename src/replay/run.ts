import type { CityRecord } from '../cities/catalog.ts';
import type { TempUnit } from '../lib/temperature.ts';
import { localDayBounds, localTime } from '../lib/local-day.ts';
import { bucketFor } from '../buckets/labels.ts';
import { DEFAULT_KIND, dailyExtreme, dailyHighReading, KIND_RULES, type Observation } from '../buckets/daily-high.ts';
import { resolveReading } from '../buckets/rounding.ts';
import { detect, type DayState } from '../signals/detect.ts';
import type { ReplayMarket } from './market.ts';

/** One city-day replayed (pure). Signals are numbered from 1 within the day; live `seq` continues across days. */
type ReplayReading = { reading: number; unit: TempUnit; bucket: string | null };

type ReplayInput = {
  city: CityRecord;
  date: string;
  observations: readonly Observation[];
  source: string;
  market: ReplayMarket;
  notes?: string[];
};

export function runReplay(input: ReplayInput) {
  const { city, date, market } = input;
  const unit = market.buckets[0]!.unit;
  // The same per-rule filter and rounding as the poller, so a replayed day resolves as the market did.
  const kind = market.rule?.kind ?? (city.resolutionSource === 'hko' ? 'hko' : DEFAULT_KIND);
  const day = { timezone: city.timezone, date, unit, kind, extreme: city.kind };
  const { startMs, endMs } = localDayBounds(city.timezone, date);
  const inDay = input.observations.filter((o) => Number.isFinite(o.temp) && o.atMs >= startMs && o.atMs < endMs).length;
  const iso = (ms: number) => new Date(ms).toISOString();

  // As a poller ticking after every observation would have seen it, so no rule is re-implemented here.
  const sorted = [...input.observations].sort((a, b) => a.atMs - b.atMs);
  let state: DayState | null = null;
  let baseline: (ReplayReading & { observedAt: string }) | null = null;
  const signals: { seq: number; old: ReplayReading; new: ReplayReading; observedAt: string }[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const atMs = sorted[i]!.atMs;
    // Reports sharing one instant (a METAR and its SPECI) arrive together, as in one poll.
    if (i + 1 < sorted.length && sorted[i + 1]!.atMs === atMs) continue;
    const reading = dailyHighReading(sorted.slice(0, i + 1), day);
    if (reading === null) continue;
    const d = detect(state, reading, { buckets: market.buckets, kind: day.extreme });
    if (!d.changed) continue;
    state = d.next;
    if (d.baseline) baseline = { reading: d.next.high, unit, bucket: d.next.bucket, observedAt: iso(atMs) };
    if (d.crossing) {
      signals.push({
        seq: signals.length + 1,
        old: { reading: d.crossing.old.reading, unit, bucket: d.crossing.old.bucket },
        new: { reading: d.crossing.new.reading, unit, bucket: d.crossing.new.bucket },
        observedAt: iso(atMs),
      });
    }
  }

  const highObs = dailyExtreme(input.observations, day);
  const high = dailyHighReading(input.observations, day);
  const final =
    highObs === null || high === null
      ? null
      : { reading: high, unit, bucket: bucketFor(high, market.buckets)?.label ?? null, observedAt: iso(highObs.atMs) };

  const notes: string[] = [...(input.notes ?? [])];
  if (unit !== city.unit) {
    notes.push(
      `the market's buckets are in °${unit} while ${city.displayName} resolves in °${city.unit} today: readings are resolved in °${unit}, as this market was written`,
    );
  }
  if (final && final.bucket === null)
    notes.push(`the day's high ${final.reading}°${unit} falls in a gap of the ladder`);
  if (inDay === 0) notes.push('no observation falls inside the local day');
  if (highObs && highObs.unit !== unit && Number.isInteger(highObs.temp)) {
    notes.push(
      `observations are whole °${highObs.unit}; converted to °${unit} they can be off by one degree (${highObs.temp}°${highObs.unit} -> ${resolveReading(highObs.temp, highObs.unit, unit)}°${unit})`,
    );
  }

  return {
    city: city.slug,
    displayName: city.displayName,
    date,
    timezone: city.timezone,
    localDay: { start: iso(startMs), end: iso(endMs), hours: (endMs - startMs) / 3_600_000 },
    kind,
    /** The ladder's unit, which readings resolve in (`notes` says when it is not the city's). */
    unit,
    buckets: market.buckets.map((b) => b.label),
    observations: {
      source: input.source,
      total: input.observations.length,
      inDay,
      outsideDay: input.observations.length - inDay,
    },
    baseline,
    signals,
    final,
    market: { origin: market.origin, slug: market.slug, url: market.url, resolvedBucket: market.resolvedBucket },
    /** The event's own resolution rule; null for --buckets. */
    rule: market.rule,
    notes,
    ...(market.resolvedBucket === null ? {} : { match: final?.bucket === market.resolvedBucket }),
  };
}

type ReplayResult = ReturnType<typeof runReplay>;

/** Times in the city's local time (the local day decides what counts) and in UTC, to match raw data. */
export function formatReplay(r: ReplayResult): string {
  const at = (iso: string) => `${localTime(r.timezone, Date.parse(iso))} (${iso.slice(11, 16)}Z)`;
  const rd = (x: ReplayReading) => `${x.reading}°${x.unit} ${x.bucket ?? '(no bucket)'}`;
  const o = r.observations;
  const lines = [
    `replay ${r.city} ${r.date}  ${r.displayName}, ${r.timezone}`,
    `local day   ${r.localDay.start} .. ${r.localDay.end} (${r.localDay.hours} h)`,
    `buckets     ${r.buckets.join(' | ')}`,
    `observations ${o.total} from ${o.source}: ${o.inDay} in the local day, ${o.outsideDay} outside (ignored)`,
    r.baseline
      ? `baseline    ${rd(r.baseline)} at ${at(r.baseline.observedAt)} (sets the day, emits nothing)`
      : 'baseline    none',
    r.signals.length === 0 ? 'signals     none would have fired' : null,
    ...r.signals.map((s) => `signal #${s.seq}  ${rd(s.old)} -> ${rd(s.new)}  at ${at(s.observedAt)}`),
    r.final
      ? `final high  ${rd(r.final)}  (first seen ${at(r.final.observedAt)})`
      : 'final high  none (no observation in the local day)',
    r.market.slug ? `market      ${r.market.slug} (${r.market.origin})` : null,
    r.rule ? `rule        ${ruleLine(r.rule)}` : null,
    `counts      ${KIND_RULES[r.kind].describe}`,
    r.market.resolvedBucket !== null
      ? `resolved    ${r.market.resolvedBucket}  match: ${r.match}`
      : r.market.origin !== 'labels'
        ? 'resolved    not yet (no bucket has outcomePrices ["1","0"])'
        : null,
    ...r.notes.map((n) => `note        ${n}`),
  ];
  return lines.filter((l) => l !== null).join('\n');
}

/** `noaa KSEA °F, whole degrees, fallback wu (https://www.weather.gov/wrh/timeseries?site=ksea)` */
function ruleLine(rule: NonNullable<ReplayResult['rule']>): string {
  if (rule.source === 'unknown') return `unknown (${rule.reason ?? 'unrecognised wording'})`;
  const precision = rule.precision === 0.1 ? 'tenths of a degree' : 'whole degrees';
  const view = rule.kind === 'noaa-hourly' ? ', hourly view' : '';
  return `${rule.source} ${rule.station} °${rule.unit}${view}, ${precision}${rule.fallback ? `, fallback ${rule.fallback}` : ''}${rule.url ? ` (${rule.url})` : ''}`;
}
