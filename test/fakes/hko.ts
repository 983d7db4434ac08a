import { startFakeServer, type FakeServer } from './upstream.ts';

const HKO_MAXMIN_PATH = '/weatherAPI/hko_data/regional-weather/latest_since_midnight_maxmin.csv';

/**
 * The Hong Kong Observatory's open data with its real wire format: the since-midnight max/min CSV
 * (`text/csv`, a header row, one row per automatic weather station, `Date time` as Hong Kong time
 * `YYYYMMDDHHmm`, values in 0.1 °C, `N/A` when missing). Other stations' rows are always present,
 * as in the real file, so a reader must pick the `HK Observatory` row.
 */
export type FakeHko = FakeServer & {
  /** The Observatory's row: time (epoch ms), maximum and minimum since midnight; null: `N/A`. */
  setObservatory(atMs: number, maxC: number | null, minC?: number | null): void;
  /** Drops the Observatory's row (a file without it). */
  dropObservatory(): void;
};

const HEADER =
  'Date time,Automatic Weather Station,Maximum Air Temperature Since Midnight(degree Celsius),Minimum Air Temperature Since Midnight(degree Celsius)';

/** `YYYYMMDDHHmm` in Hong Kong time (UTC+8). */
export function hkoStamp(atMs: number): string {
  return new Date(atMs + 8 * 3_600_000).toISOString().slice(0, 16).replace(/[-T:]/g, '');
}

export async function startFakeHko(): Promise<FakeHko> {
  let row: { atMs: number; maxC: number | null; minC: number | null } | null = null;
  const fmt = (v: number | null) => (v === null ? 'N/A' : v.toFixed(1));
  const server = await startFakeServer('hko', (req) => {
    if (req.method !== 'GET' || req.path !== HKO_MAXMIN_PATH) return { status: 404, body: { error: 'not found' } };
    const at = row?.atMs ?? Date.now();
    const stamp = hkoStamp(at);
    const lines = [HEADER, `${stamp},Chek Lap Kok,${fmt((row?.maxC ?? 25) + 0.4)},${fmt(row?.minC ?? 20)}`];
    if (row) lines.push(`${stamp},HK Observatory,${fmt(row.maxC)},${fmt(row.minC)}`);
    lines.push(`${stamp},King's Park,${fmt((row?.maxC ?? 25) - 0.3)},${fmt(row?.minC ?? 20)}`);
    return { status: 200, raw: true, headers: { 'content-type': 'text/csv' }, body: `${lines.join('\r\n')}\r\n` };
  });
  return Object.assign(server, {
    setObservatory: (atMs: number, maxC: number | null, minC: number | null = null) => {
      row = { atMs, maxC, minC };
    },
    dropObservatory: () => {
      row = null;
    },
  });
}
