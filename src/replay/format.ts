import { KIND_RULES } from '../buckets/rule-kinds.ts';
import { localTime } from '../lib/local-day.ts';
import type { ReplayReading, ReplayResult } from './run.ts';

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
