/**
 * Our part of a signal's latency at the DEFAULT live cadence (issue 41 item 3), for
 * `npm run bench -- --only availability`. A real `src/main.ts serve` process in live mode
 * (FEED=live, WEATHER_SOURCE=metar, no POLL_INTERVAL_MS: one batched METAR request for every
 * station each 5 s tick) against the local fakes of test/fakes/ over 127.0.0.1, real clock, real
 * SQLite file.
 *
 * The fake METAR publishes each report the way aviationweather.gov does: a report stamped
 * `obsTime` becomes visible `d` later, `d` drawn from the reference capture's receiptTime - obsTime
 * (the three rows of /work/shared/reference/upstream/aviationweather_metar_sample.json: 188.6 s,
 * 196.6 s, 275.8 s, each with up to +-5 s of jitter), and its receiptTime is that instant.
 * Publications come at random instants (exponential gaps), so they land anywhere in the poll
 * cycle. The figures come from the server itself: `GET /v1/stats/latency` once every signal is
 * stored, beside the same steps computed from the rows, and the fake's request log gives the
 * METAR requests per hour against the published limit.
 *
 * node scripts/bench/availability.ts '{"publications":30,"gapMs":1500}'  (prints one JSON line)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createCatalog, type CityRecord } from '../../src/cities/catalog.ts';
import { addDays, localDate } from '../../src/lib/local-day.ts';
import { formatLabel } from '../../src/buckets/labels.ts';
import { convertTemp } from '../../src/buckets/rounding.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../../test/fakes/gamma.ts';
import { startFakeClob } from '../../test/fakes/clob.ts';
import { startFakeMetar } from '../../test/fakes/metar.ts';
import { freePort, NODE, percentile, ROOT, round, sleep, spawnServer } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { publications?: number; gapMs?: number };
const PUBLICATIONS = input.publications ?? 30;
const GAP_MS = input.gapMs ?? 1_500;
/** receiptTime - obsTime of the capture's rows, in ms. */
export const CAPTURE_DELAYS_MS = [188_569, 196_580, 275_841];
const POLL_INTERVAL_MS = 5_000;
/** aviationweather.gov's published limit for its data API: 100 requests a minute (docs/performance.md). */
const SOURCE_LIMIT_PER_HOUR = 100 * 60;
const log = (line: string) => process.stderr.write(`availability: ${line}\n`);

const delay = () =>
  CAPTURE_DELAYS_MS[Math.floor(Math.random() * CAPTURE_DELAYS_MS.length)]! + Math.round((Math.random() - 0.5) * 10_000);
const gap = () => Math.min(6 * GAP_MS, -Math.log(1 - Math.random()) * GAP_MS);
const FIRST = (c: CityRecord) => (c.unit === 'F' ? 60 : 10);
function labels(c: CityRecord): string[] {
  const w = c.bucketWidth;
  const f = FIRST(c);
  return [
    formatLabel({ lo: Number.NEGATIVE_INFINITY, hi: f - 1, unit: c.unit }),
    ...Array.from({ length: 9 }, (_, i) => formatLabel({ lo: f + i * w, hi: f + i * w + w - 1, unit: c.unit })),
    formatLabel({ lo: f + 9 * w, hi: Number.POSITIVE_INFINITY, unit: c.unit }),
  ];
}
const toC = (c: CityRecord, deg: number) => Math.round(convertTemp(deg, c.unit, 'C') * 10) / 10;
const stats = (xs: number[]) => ({
  n: xs.length,
  p50: round(percentile(xs, 50), 0),
  p90: round(percentile(xs, 90), 0),
  p99: round(percentile(xs, 99), 0),
  max: round(Math.max(...xs), 0),
});

const dir = mkdtempSync(join(tmpdir(), 'isocast-bench-availability-'));
const [gamma, clob, metar] = await Promise.all([startFakeGamma(), startFakeClob(), startFakeMetar()]);
const t0 = Date.now();
// Cities whose local day neither began within the longest delay before the run (the baseline
// report must fall inside it) nor ends during it (a new day's first report is a baseline).
const maxDelay = Math.max(...CAPTURE_DELAYS_MS) + 10_000;
const sameDay = (c: CityRecord) =>
  localDate(c.timezone, t0 - maxDelay - 60_000) === localDate(c.timezone, t0 + 15 * 60_000);
const cities = createCatalog().active.filter((c) => c.station && sameDay(c));
for (const c of cities) {
  const today = localDate(c.timezone, t0);
  for (const date of [today, addDays(today, 1)]) {
    const ev = gammaEvent({ token: c.marketToken, date, labels: labels(c), cityName: c.displayName });
    gamma.put(ev);
    labels(c).forEach((l, i) => {
      const t = tokensOf(ev, l);
      clob.quote(t.yes, t.no, Math.round((0.02 + 0.08 * Math.min(i, 10 - i)) * 1000) / 1000);
    });
  }
  metar.addReport(c.station!, { atMs: t0 - maxDelay - 30_000, tempC: toC(c, FIRST(c)), availableAtMs: t0 - 30_000 });
}

const port = await freePort();
const server = await spawnServer(NODE, [join(ROOT, 'src', 'main.ts'), 'serve'], {
  port,
  logFile: join(dir, 'server.log'),
  env: {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    DATA_DIR: dir,
    HOST: '127.0.0.1',
    PORT: String(port),
    PAYMENT_MODE: 'mock',
    FEED: 'live',
    WEATHER_SOURCE: 'metar',
    GAMMA_URL: gamma.url,
    CLOB_URL: clob.url,
    METAR_URL: metar.url,
    LOG_LEVEL: 'warn',
  },
});
const db = new Database(join(dir, 'isocast.db'), { readonly: true, fileMustExist: true });
try {
  const states = db.prepare('SELECT count(*) FROM day_state').pluck();
  for (const until = Date.now() + 30_000; (states.get() as number) < cities.length; await sleep(100))
    if (Date.now() > until)
      throw new Error(
        `no baselines after 30 s; server log:\n${readFileSync(join(dir, 'server.log'), 'utf8').slice(-1500)}`,
      );

  const steadyFrom = Date.now();
  const level = new Map(cities.map((c) => [c.slug, FIRST(c)]));
  const signalsOf = db.prepare('SELECT count(*) FROM signals WHERE city = ?').pluck();
  const published = new Map<string, number>();
  log(`${cities.length} cities; ${PUBLICATIONS} publications, mean gap ${GAP_MS} ms, default cadence`);
  for (let i = 0; i < PUBLICATIONS; ) {
    await sleep(gap());
    // One publication in flight per city, so each yields exactly one signal.
    const free = cities.filter(
      (c) =>
        (signalsOf.get(c.slug) as number) >= (published.get(c.slug) ?? 0) &&
        level.get(c.slug)! < FIRST(c) + 7 * c.bucketWidth,
    );
    const c = free[Math.floor(Math.random() * free.length)];
    if (!c) continue;
    level.set(c.slug, level.get(c.slug)! + c.bucketWidth);
    const now = Date.now();
    metar.addReport(c.station!, {
      atMs: Math.floor((now - delay()) / 1000) * 1000,
      tempC: toC(c, level.get(c.slug)!),
      availableAtMs: now,
    });
    published.set(c.slug, (published.get(c.slug) ?? 0) + 1);
    i++;
  }
  const total = db.prepare('SELECT count(*) FROM signals').pluck();
  for (const until = Date.now() + 30_000; (total.get() as number) < PUBLICATIONS && Date.now() < until; )
    await sleep(200);
  const steadyMs = Date.now() - steadyFrom;
  const metarCalls = metar.requests.filter((r) => r.atMs >= steadyFrom).length;
  const perHour = Math.round((metarCalls * 3_600_000) / steadyMs);

  const rows = db.prepare('SELECT payload FROM signals').pluck().all() as string[];
  const steps = {
    reportToAvailable: [] as number[],
    availableToObserved: [] as number[],
    observedToStored: [] as number[],
    reportToStored: [] as number[],
  };
  for (const p of rows) {
    const s = JSON.parse(p) as Record<string, string | null>;
    const at = (x: string | null | undefined) => (x ? Date.parse(x) : Number.NaN);
    const [rep, avail, obs, stored] = [at(s.reportedAt), at(s.availableAt), at(s.observedAt), at(s.storedAt)];
    if (![rep, avail, obs, stored].every(Number.isFinite)) continue;
    steps.reportToAvailable.push(avail - rep);
    steps.availableToObserved.push(obs - avail);
    steps.observedToStored.push(stored - obs);
    steps.reportToStored.push(stored - rep);
  }
  const statsRes = await fetch(`${server.url}/v1/stats/latency`);
  const published24h = ((await statsRes.json()) as { windows: { window: string; bySource: unknown[] }[] }).windows.find(
    (w) => w.window === '24h',
  );
  const availableToObserved = stats(steps.availableToObserved);
  process.stdout.write(
    JSON.stringify({
      cities: cities.length,
      publications: PUBLICATIONS,
      signals: rows.length,
      pollIntervalMs: POLL_INTERVAL_MS,
      captureDelaysMs: CAPTURE_DELAYS_MS,
      stepsMs: {
        reportToAvailable: stats(steps.reportToAvailable),
        availableToObserved,
        observedToStored: stats(steps.observedToStored),
        reportToStored: stats(steps.reportToStored),
      },
      availableToObservedP99WithinOnePoll: availableToObserved.p99 <= POLL_INTERVAL_MS,
      metar: {
        windowS: round(steadyMs / 1000, 0),
        requests: metarCalls,
        perHour,
        publishedLimitPerHour: SOURCE_LIMIT_PER_HOUR,
        shareOfLimit: round(perHour / SOURCE_LIMIT_PER_HOUR, 3),
      },
      statsLatency24h: published24h?.bySource,
      // One stored signal with its provenance, odds left out for length.
      exampleSignal: rows[0] ? { ...JSON.parse(rows[0]), buckets: '(11 buckets)' } : null,
    }) + '\n',
  );
} finally {
  db.close();
  await server.stop();
  await Promise.all([gamma.close(), clob.close(), metar.close()]);
  rmSync(dir, { recursive: true, force: true });
}
