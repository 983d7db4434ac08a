import type { SignalPublic } from '../signals/schemas.ts';
import { disclaimerText } from '../terms/terms.ts';

/** Chat texts, plain (no parse mode): a label such as `90°F or higher` or a URL needs no escaping. Pure. */
const LICENCE_LINE = 'Licensed for your own use only; resale and redistribution are not permitted.';

/** The Bot API refuses texts over 4096 characters. */
const MAX_MESSAGE_CHARS = 4096;

function reading(r: { reading: number; unit: string }): string {
  return `${Number(r.reading.toFixed(2))}°${r.unit}`;
}

function percent(p: number): string {
  if (p > 0 && p < 0.005) return '<1%';
  if (p < 1 && p > 0.995) return '>99%';
  return `${Math.round(p * 100)}%`;
}

function utcTime(iso: string | null): string | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? `${new Date(t).toISOString().slice(11, 19)} UTC` : null;
}

/** A low stream's crossing is always colder than where it came from; a high's always warmer. */
function isLow(s: SignalPublic): boolean {
  return s.new.reading < s.old.reading;
}

function oddsLines(s: SignalPublic): string[] {
  if (!s.buckets || s.buckets.length === 0) return ['Odds: not available for this signal'];
  const asOf = utcTime(s.bucketsAsOf);
  const lines = [`Odds (YES price)${asOf ? ` at ${asOf}` : ''}:`];
  const dead = s.buckets.filter((b) => b.dead);
  for (const b of s.buckets) {
    if (b.dead) continue;
    lines.push(
      `${b.label === s.new.bucket ? '> ' : '  '}${b.label}  ${b.noQuote ? 'no quote (empty book)' : percent(b.yes)}`,
    );
  }
  if (dead.length > 0) {
    lines.push(
      `  ${dead.length} dead bucket${dead.length === 1 ? '' : 's'} (${isLow(s) ? 'above the low' : 'below the high'}, no longer reachable): ${dead.map((b) => b.label).join(', ')}`,
    );
  }
  return lines;
}

export function formatSignalMessage(s: SignalPublic, opts: { termsUrl: string }): string {
  const head = [
    `isocast signal #${s.seq}: ${s.displayName}, market day ${s.targetDate} (city-local)`,
    `Daily ${isLow(s) ? 'low' : 'high'} ${reading(s.old)} -> ${reading(s.new)}`,
    `Bucket ${s.old.bucket ?? 'none'} -> ${s.new.bucket ?? 'none'}`,
    `Observed ${utcTime(s.observedAt) ?? s.observedAt} (source ${s.source}${s.reportedAt ? `, station report ${utcTime(s.reportedAt)}` : ''})`,
  ];
  const tail = [`Market: ${s.marketUrl}`, '', disclaimerText(opts.termsUrl), LICENCE_LINE];
  let odds = oddsLines(s);
  const build = () => [...head, '', ...odds, '', ...tail].join('\n');
  let text = build();
  // Only a market with an absurd number of buckets gets here; the odds give way, never the notices.
  while (text.length > MAX_MESSAGE_CHARS && odds.length > 2) {
    odds = [...odds.slice(0, -2), '  (more buckets on the market page)'];
    text = build();
  }
  return text;
}

export function registrationTestMessage(opts: { wallet: string; city: string | null; termsUrl: string }): string {
  const short = `${opts.wallet.slice(0, 6)}...${opts.wallet.slice(-4)}`;
  const scope = opts.city ? `for ${opts.city}` : 'for every city';
  return [
    `isocast: this chat is now registered to receive the signals wallet ${short} is entitled to, ${scope}.`,
    'Registering is free and charges nothing; signals arrive here as they are emitted, once each.',
    '',
    disclaimerText(opts.termsUrl),
    LICENCE_LINE,
  ].join('\n');
}
