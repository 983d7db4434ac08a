import { startFakeServer, type FakeServer } from './upstream.ts';

/**
 * aviationweather.gov `GET /api/data/metar?ids=A,B&format=json&hours=N`: a JSON array with one row
 * per report in the last N hours (relative to the fake's `now`), newest first; HTTP 204 with an
 * empty body when nothing matches, as the real API does. US rows carry tenths of °C and a raw
 * report with the RMK T-group; others whole °C. A report is served from its `availableAtMs` on
 * (default: its own time), and that instant is its `receiptTime`, as aviationweather.gov stamps
 * the moment it received the report.
 */
export type FakeReport = { atMs: number; tempC: number; availableAtMs?: number };
export type FakeMetar = FakeServer & {
  setReports(icao: string, reports: FakeReport[]): void;
  addReport(icao: string, report: FakeReport): void;
};

function tGroup(c: number): string {
  const t = Math.round(Math.abs(c) * 10);
  return `T${c < 0 ? 1 : 0}${String(t).padStart(3, '0')}0${String(t > 80 ? t - 80 : 0).padStart(3, '0')}`;
}

export async function startFakeMetar(opts: { now?: () => number } = {}): Promise<FakeMetar> {
  const now = opts.now ?? Date.now;
  const reports = new Map<string, FakeReport[]>();
  const server = await startFakeServer('metar', (req) => {
    if (req.method !== 'GET' || req.path !== '/api/data/metar') return { status: 404, body: { error: 'not found' } };
    if (req.query.get('format') !== 'json') return { status: 400, body: { error: 'format' } };
    const hours = Number(req.query.get('hours') ?? '1');
    const since = now() - hours * 3_600_000;
    const rows = (req.query.get('ids') ?? '')
      .split(',')
      .filter(Boolean)
      .flatMap((icao) =>
        (reports.get(icao.toUpperCase()) ?? [])
          .filter((r) => r.atMs >= since && (r.availableAtMs ?? r.atMs) <= now())
          .map((r) => {
            const us = icao.startsWith('K');
            const d = new Date(r.atMs);
            const z = `${String(d.getUTCDate()).padStart(2, '0')}${String(d.getUTCHours()).padStart(2, '0')}${String(d.getUTCMinutes()).padStart(2, '0')}Z`;
            const whole = Math.round(r.tempC);
            return {
              icaoId: icao.toUpperCase(),
              receiptTime: new Date(r.availableAtMs ?? r.atMs).toISOString(),
              obsTime: Math.floor(r.atMs / 1000),
              reportTime: new Date(Math.ceil(r.atMs / 3_600_000) * 3_600_000).toISOString(),
              temp: us ? Math.round(r.tempC * 10) / 10 : whole,
              dewp: whole - 8,
              metarType: 'METAR',
              rawOb: `METAR ${icao.toUpperCase()} ${z} 35013KT 10SM FEW060 ${whole < 0 ? 'M' + String(-whole).padStart(2, '0') : String(whole).padStart(2, '0')}/08 A3015${us ? ` RMK AO2 SLP209 ${tGroup(r.tempC)}` : ''}`,
            };
          }),
      )
      .sort((a, b) => b.obsTime - a.obsTime);
    return rows.length === 0 ? { status: 204 } : { status: 200, body: rows };
  });
  return Object.assign(server, {
    setReports: (icao: string, list: FakeReport[]) => {
      reports.set(icao.toUpperCase(), [...list]);
    },
    addReport: (icao: string, r: FakeReport) => {
      reports.set(icao.toUpperCase(), [...(reports.get(icao.toUpperCase()) ?? []), r]);
    },
  });
}
