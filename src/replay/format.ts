import { KIND_RULES } from '../buckets/rule-kinds.ts';
import { localTime } from '../lib/local-day.ts';
import type { ReplayReading, ReplayResult } from './run.ts';

/** Times in the city's local time (the local day decides what counts) and in UTC, to match raw data. */
export function formatReplay(r: ReplayResult): string {
  const at = (iso: string) => `${localTime(r.timezone, Date.parse(iso))} (${iso.slice(11, 16)}Z)`;
  const rd = (x: ReplayReading) => `${x.reading}°${x.unit} ${x.bucket ?? '(no bucket)'}`;
  const lines: string[] = [];
  lines.push(`replay ${r.city} ${r.date}  ${r.displayName}, ${r.timezone}`);
  lines.push(`local day   ${r.localDay.start} .. ${r.localDay.end} (${r.localDay.hours} h)`);
  lines.push(`buckets     ${r.buckets.join(' | ')}`);
  const o = r.observations;
  lines.push(
    `observations ${o.total} from ${o.source}: ${o.inDay} in the local day, ${o.outsideDay} outside (ignored)`,
  );
  lines.push(
    r.baseline
      ? `baseline    ${rd(r.baseline)} at ${at(r.baseline.observedAt)} (sets the day, emits nothing)`
      : 'baseline    none',
  );
  if (r.signals.length === 0) lines.push('signals     none would have fired');
  for (const s of r.signals) lines.push(`signal #${s.seq}  ${rd(s.old)} -> ${rd(s.new)}  at ${at(s.observedAt)}`);
  lines.push(
    r.final
      ? `final high  ${rd(r.final)}  (first seen ${at(r.final.observedAt)})`
      : 'final high  none (no observation in the local day)',
  );
  if (r.market.slug) lines.push(`market      ${r.market.slug} (${r.market.origin})`);
  if (r.rule) lines.push(`rule        ${ruleLine(r.rule)}`);
  lines.push(`counts      ${KIND_RULES[r.kind].describe}`);
  if (r.market.resolvedBucket !== null) lines.push(`resolved    ${r.market.resolvedBucket}  match: ${r.match}`);
  else if (r.market.origin !== 'labels') lines.push('resolved    not yet (no bucket has outcomePrices ["1","0"])');
  for (const n of r.notes) lines.push(`note        ${n}`);
  return lines.join('\n');
}

/** `noaa KSEA °F, whole degrees, fallback wu (https://www.weather.gov/wrh/timeseries?site=ksea)` */
function ruleLine(rule: NonNullable<ReplayResult['rule']>): string {
  if (rule.source === 'unknown') return `unknown (${rule.reason ?? 'unrecognised wording'})`;
  const precision = rule.precision === 0.1 ? 'tenths of a degree' : 'whole degrees';
  const view = rule.kind === 'noaa-hourly' ? ', hourly view' : '';
  return `${rule.source} ${rule.station} °${rule.unit}${view}, ${precision}${rule.fallback ? `, fallback ${rule.fallback}` : ''}${rule.url ? ` (${rule.url})` : ''}`;
}
