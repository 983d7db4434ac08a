import { z } from 'zod';
import type { Clock } from '../../lib/clock.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { httpRequest } from '../../lib/http-client.ts';
import { localDayBounds } from '../../lib/local-day.ts';
import type { Observation, ReportType } from '../../buckets/daily-high.ts';
import { observeByCall, type WeatherSource } from './types.ts';
import { createRateLimiter, parseUpstream, requireOk, type RateLimiter } from '../upstream.ts';

/**
 * A T-group's tenths are used when `temp` is whole: °F cities need them (buckets/rounding.ts). The
 * report type matters because NOAA's hourly view leaves SPECIs out. A bad `receiptTime` is never guessed.
 */
const MetarRow = z.object({
  icaoId: z.string().min(3),
  obsTime: z.number().int().positive(),
  temp: z.number().finite().nullable().optional(),
  rawOb: z.string().optional(),
  metarType: z.string().nullish(),
  receiptTime: z.string().nullish(),
});

/** A year-275760 receiptTime would stop the signal (the schema refuses it): out of range means `availableAt: null`. */
const RECEIPT_BEFORE_MS = 3_600_000;
const RECEIPT_AFTER_MS = 7 * 86_400_000;

/** A raw report is a line of text: bounded, and stripped of control characters before it is stored. */
const MAX_RAW_REPORT = 512;
const STATIONS_PER_REQUEST = 40;
const cleanRaw = (raw: string) =>
  raw
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, MAX_RAW_REPORT);

/** `T02170078` -> 21.7; `T10231045` -> -2.3 (sign digit 1 = negative). */
function tGroupTemp(rawOb: string | undefined): number | null {
  const m = rawOb ? /\bRMK\b.*?\bT([01])(\d{3})[01]\d{3}\b/.exec(rawOb) : null;
  if (!m) return null;
  return ((m[1] === '1' ? -1 : 1) * Number(m[2])) / 10;
}

function reportType(metarType: string | null | undefined, rawOb: string | undefined): ReportType | undefined {
  const t = (metarType ?? /^\s*(METAR|SPECI)\b/i.exec(rawOb ?? '')?.[1] ?? '').toUpperCase();
  return t === 'SPECI' ? 'special' : t === 'METAR' ? 'routine' : undefined;
}

export function parseMetar(raw: unknown): Map<string, Observation[]> {
  if (!Array.isArray(raw)) throw new UpstreamError('metar', 'response is not an array');
  const out = new Map<string, Observation[]>();
  for (const row of raw) {
    const r = parseUpstream(MetarRow, row, { upstream: 'metar', what: 'row' });
    const tenths = tGroupTemp(r.rawOb);
    const temp = tenths !== null && (typeof r.temp !== 'number' || Math.abs(tenths - r.temp) <= 0.5) ? tenths : r.temp;
    if (typeof temp !== 'number') continue;
    const id = r.icaoId.toUpperCase();
    const report = reportType(r.metarType, r.rawOb);
    const o: Observation = { atMs: r.obsTime * 1000, temp, unit: 'C' };
    if (report) o.report = report;
    if (r.rawOb) o.raw = cleanRaw(r.rawOb);
    o.precision = temp === tenths || !Number.isInteger(temp) ? 0.1 : 1;
    const receipt = r.receiptTime ? Date.parse(r.receiptTime) : Number.NaN;
    if (Number.isFinite(receipt) && receipt - o.atMs >= -RECEIPT_BEFORE_MS && receipt - o.atMs <= RECEIPT_AFTER_MS)
      o.availableAtMs = receipt;
    (out.get(id) ?? out.set(id, []).get(id)!).push(o);
  }
  return out;
}

export function createMetarWeather(opts: {
  baseUrl: string;
  clock: Clock;
  timeoutMs?: number;
  limiter?: RateLimiter;
}): WeatherSource {
  // aviationweather.gov asks for no more than 100 requests a minute.
  const limiter = opts.limiter ?? createRateLimiter({ limit: 60, windowMs: 60_000 });
  return {
    name: 'metar',
    channel: 'metar-api',
    observe: (requests) =>
      observeByCall(requests, {
        keyOf: (r) => r.city.station || new UpstreamError('metar', 'city has no ICAO station'),
        perCall: STATIONS_PER_REQUEST,
        call: async (stations, reqs) => {
          // Enough hours back to cover the earliest local midnight among the call's days.
          const earliest = Math.min(...reqs.map((r) => localDayBounds(r.city.timezone, r.date).startMs));
          const hours = Math.min(48, Math.max(1, Math.ceil((opts.clock.now() - earliest) / 3_600_000) + 1));
          const url = `${opts.baseUrl}/api/data/metar?ids=${stations.map(encodeURIComponent).join(',')}&format=json&hours=${hours}`;
          await limiter.acquire();
          const res = await httpRequest({ upstream: 'metar', url, timeoutMs: opts.timeoutMs ?? 8_000 });
          if (res.status === 204) return () => [];
          requireOk('metar', res);
          if (res.json === undefined)
            throw new UpstreamError('metar', 'response is not JSON', { httpStatus: res.status });
          const rows = parseMetar(res.json);
          return (r) => rows.get(r.city.station!.toUpperCase()) ?? [];
        },
      }),
  };
}
