import { UpstreamError } from '../../lib/errors.ts';
import { httpRequest } from '../../lib/http-client.ts';
import { observeByCall, type WeatherSource } from './types.ts';
import { requireOk } from '../upstream.ts';

/**
 * The since-midnight max/min CSV: `rhrread` is whole degrees and CLMMAXT comes after the day. Rows
 * before 01:00 are left out: the file has carried the previous day's maximum until the reset.
 */
const HKO_MAXMIN_PATH = '/weatherAPI/hko_data/regional-weather/latest_since_midnight_maxmin.csv';
const HKO_STATION = 'HK Observatory';
const HKT_OFFSET_MS = 8 * 3_600_000;

export function parseHkoMaxMin(csv: string) {
  const lines = csv.replace(/^\uFEFF/, '').split(/\r?\n/);
  const header = lines[0]?.split(',').map((c) => c.trim()) ?? [];
  const maxCol = header.findIndex((h) => /^Maximum Air Temperature/i.test(h));
  const stationCol = header.findIndex((h) => /^Automatic Weather Station$/i.test(h));
  const timeCol = header.findIndex((h) => /^Date time$/i.test(h));
  if (maxCol < 0 || stationCol < 0 || timeCol < 0)
    throw new UpstreamError('hko', 'since-midnight CSV has no Date time / station / maximum columns');
  for (const line of lines.slice(1)) {
    const cells = line.split(',').map((c) => c.trim());
    if (cells[stationCol] !== HKO_STATION) continue;
    const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(cells[timeCol] ?? '');
    if (!m) throw new UpstreamError('hko', `unreadable Date time ${JSON.stringify(cells[timeCol] ?? '')}`);
    const raw = cells[maxCol] ?? '';
    if (raw === '' || /^N\/?A$/i.test(raw)) return null;
    if (!/^-?\d+(\.\d+)?$/.test(raw)) throw new UpstreamError('hko', `unreadable maximum ${JSON.stringify(raw)}`);
    const [, y, mo, d, h, mi] = m as unknown as [string, string, string, string, string, string];
    const atMs = Date.UTC(+y, +mo - 1, +d, +h, +mi) - HKT_OFFSET_MS;
    return { atMs, localDate: `${y}-${mo}-${d}`, localMinutes: +h * 60 + +mi, maxC: Math.round(Number(raw) * 10) / 10 };
  }
  return null;
}

export function createHkoWeather(opts: { baseUrl: string; timeoutMs?: number }): WeatherSource {
  return {
    name: 'hko',
    observe: (requests) =>
      observeByCall(requests, {
        keyOf: () => 'hko',
        call: async () => {
          const res = await httpRequest({
            upstream: 'hko',
            url: `${opts.baseUrl}${HKO_MAXMIN_PATH}`,
            headers: { accept: 'text/csv, text/plain, */*' },
            timeoutMs: opts.timeoutMs ?? 8_000,
          });
          requireOk('hko', res);
          const reading = parseHkoMaxMin(res.text);
          return (r) => {
            if (r.city.resolutionSource !== 'hko')
              return new UpstreamError('hko', 'only the Hong Kong Observatory row is observed here');
            const usable = reading !== null && reading.localDate === r.date && reading.localMinutes >= 60;
            return usable ? [{ atMs: reading.atMs, temp: reading.maxC, unit: 'C', precision: 0.1 }] : [];
          };
        },
      }),
  };
}
