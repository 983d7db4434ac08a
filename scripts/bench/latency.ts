/**
 * Signal latency from publication, for `npm run bench` (issue 15, goal 4), and the odds hold-back
 * when the order books cannot be had (goal 5). A real `src/main.ts serve` process in live mode
 * (FEED=live, WEATHER_SOURCE=metar) with every cadence at its DEFAULT (no POLL_INTERVAL_MS, no
 * ODDS_DEADLINE_MS), pointed at the local fakes of test/fakes/ over 127.0.0.1, real clock, real
 * SQLite file, real delivery worker sending to the fake Bot API (one registered chat per city).
 *
 *   publication  the instant the fake METAR starts serving a new report that moves a city into its
 *                next bucket; publications come at random instants (exponential gaps, mean
 *                `gapMs`), so they land uniformly across the 5 s poll cycle;
 *   committed    the signal row's `created_at` (the server's clock when the transaction ran);
 *   bot          the fake Bot API receiving the pushed message.
 *
 * Then the CLOB is made to fail for good and `down` more publications show how long a signal is
 * held back for odds (commit - observedAt; it went out with `buckets: null`). The fakes' request
 * logs give the upstream calls actually made per hour at the defaults.
 *
 * node scripts/bench/latency.ts '{"publications":30,"down":5,"gapMs":1500}'  (prints one JSON line)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createCatalog, type CityRecord } from '../../src/cities/catalog.ts';
import { addDays, localDate } from '../../src/lib/local-day.ts';
import { eventSlugs } from '../../src/cities/market-slug.ts';
import { formatLabel } from '../../src/buckets/labels.ts';
import { convertTemp } from '../../src/buckets/rounding.ts';
import { openDb } from '../../src/db/open.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../../test/fakes/gamma.ts';
import { startFakeClob } from '../../test/fakes/clob.ts';
import { startFakeMetar } from '../../test/fakes/metar.ts';
import { startFakeBotApi } from '../../test/fakes/bot-api.ts';
import { seed as seedRegistrations } from '../measure-delivery.ts';
import { freePort, NODE, percentile, ROOT, round, sleep, spawnServer } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { publications?: number; down?: number; gapMs?: number };
const PUBLICATIONS = input.publications ?? 30;
const DOWN = input.down ?? 5;
const GAP_MS = input.gapMs ?? 1_500;
/** A report's own time trails its publication, as a METAR's obsTime trails its appearance online. */
const REPORT_LAG_MS = 4 * 60_000;
const log = (line: string) => process.stderr.write(`latency: ${line}\n`);

const FIRST = (c: CityRecord) => (c.unit === 'F' ? 60 : 10);
/** The live ladder's shape: an open lower end, nine inner buckets, an open upper end. */
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
  p99: round(percentile(xs, 99), 0),
  max: round(Math.max(...xs), 0),
});
/** Exponential gap: publication instants independent of the poller's phase. */
const gap = () => Math.min(6 * GAP_MS, -Math.log(1 - Math.random()) * GAP_MS);

const dir = mkdtempSync(join(tmpdir(), 'isocast-bench-latency-'));
const [gamma, clob, metar, bot] = await Promise.all([
  startFakeGamma(),
  startFakeClob(),
  startFakeMetar(),
  startFakeBotApi(),
]);
const t0 = Date.now();
// Cities with a METAR station whose local day neither ended just before the run (the baseline and
// the reports, up to REPORT_LAG_MS old, must fall inside it) nor ends during it (a new day's first
// report is a baseline and rightly emits nothing).
const sameDay = (c: CityRecord) =>
  localDate(c.timezone, t0 - REPORT_LAG_MS - 60_000) === localDate(c.timezone, t0 + 15 * 60_000);
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
  metar.addReport(c.station!, { atMs: t0 - REPORT_LAG_MS - 30_000, tempC: toC(c, FIRST(c)) });
}
const dbPath = join(dir, 'isocast.db');
const seeded = openDb(dbPath);
seedRegistrations(
  seeded,
  cities.map((c, i) => ({
    wallet: '0x' + (i + 1).toString(16).padStart(40, '0'),
    chat: String(700_000 + i),
    city: c.slug,
  })),
  [],
);
seeded.close();

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
    MESSENGER_API_URL: bot.url,
    MESSENGER_BOT_TOKEN: bot.token,
    LOG_LEVEL: 'warn',
  },
});
const db = new Database(dbPath, { readonly: true, fileMustExist: true });
try {
  // Baselines: every city has its day state before the first publication.
  const states = db.prepare('SELECT city FROM day_state').pluck();
  for (const until = Date.now() + 30_000; states.all().length < cities.length; await sleep(100)) {
    if (Date.now() > until) {
      const have = new Set(states.all() as string[]);
      throw new Error(
        `no baseline after 30 s for ${cities
          .filter((c) => !have.has(c.slug))
          .map((c) => c.slug)
          .join(', ')}; server log:\n${readFileSync(join(dir, 'server.log'), 'utf8').slice(-1500)}`,
      );
    }
  }
  const steadyFrom = Date.now();
  const level = new Map(cities.map((c) => [c.slug, FIRST(c)]));
  const pending = new Set<string>();
  type Pub = { city: CityRecord; atMs: number; reportAtMs: number; phase: 'up' | 'down' };
  const pubs: Pub[] = [];
  const seqs = db.prepare('SELECT count(*) FROM signals WHERE city = ?').pluck();
  const publish = async (n: number, phase: Pub['phase']) => {
    for (let i = 0; i < n; ) {
      await sleep(gap());
      for (const p of pubs)
        if (
          pending.has(p.city.slug) &&
          (seqs.get(p.city.slug) as number) >= pubs.filter((q) => q.city === p.city).length
        )
          pending.delete(p.city.slug);
      // One publication in flight per city, so each yields exactly one signal.
      const free = cities.filter((c) => !pending.has(c.slug) && level.get(c.slug)! < FIRST(c) + 7 * c.bucketWidth);
      const c = free[Math.floor(Math.random() * free.length)];
      if (!c) continue;
      level.set(c.slug, level.get(c.slug)! + c.bucketWidth);
      const reportAtMs = Math.floor((Date.now() - REPORT_LAG_MS) / 1000) * 1000;
      metar.addReport(c.station!, { atMs: reportAtMs, tempC: toC(c, level.get(c.slug)!), availableAtMs: Date.now() });
      pubs.push({ city: c, atMs: Date.now(), reportAtMs, phase });
      pending.add(c.slug);
      i++;
    }
  };
  log(`${cities.length} cities; ${PUBLICATIONS} publications, mean gap ${GAP_MS} ms, default cadence`);
  await publish(PUBLICATIONS, 'up');
  await bot.waitForMessages(PUBLICATIONS, 40_000).catch(() => undefined);
  const steadyMs = Date.now() - steadyFrom;
  const calls = (reqs: { atMs: number }[]) =>
    reqs.filter((r) => r.atMs >= steadyFrom && r.atMs < steadyFrom + steadyMs).length;
  const perHour = (n: number) => Math.round((n * 3_600_000) / steadyMs);
  // Gamma is asked only for a city-day whose event is not known yet: for the measured cities
  // none, once found; the others (no station, or a day ending during the run and so left out
  // above) are asked when their new day begins, then every 5 minutes while it has no event here.
  const measuredSlugs = new Set(
    cities.flatMap((c) => {
      const today = localDate(c.timezone, t0);
      return [today, addDays(today, 1)].flatMap((d) => Object.values(eventSlugs(c.marketToken, d)));
    }),
  );
  const gammaMeasured = gamma.requests.filter((r) => measuredSlugs.has(r.query.get('slug') ?? ''));
  const budget = {
    windowS: round(steadyMs / 1000, 0),
    metar: calls(metar.requests),
    gamma: calls(gammaMeasured),
    gammaOtherCities: calls(gamma.requests) - calls(gammaMeasured),
    clob: calls(clob.requests),
  };

  log(`CLOB down; ${DOWN} more publications`);
  clob.fault({ kind: 'status', status: 503 });
  await publish(DOWN, 'down');
  await bot.waitForMessages(PUBLICATIONS + DOWN, 60_000).catch(() => undefined);

  const rows = db
    .prepare('SELECT city, seq, created_at AS createdAt, payload FROM signals ORDER BY created_at')
    .all() as { city: string; seq: number; createdAt: number; payload: string }[];
  const toCommit: number[] = [];
  const toBot: number[] = [];
  const heldBack: number[] = [];
  const downToCommit: number[] = [];
  let reportedAtOk = 0;
  let nullBuckets = 0;
  for (const c of cities) {
    const mine = pubs.filter((p) => p.city === c);
    const signals = rows.filter((r) => r.city === c.slug).sort((a, b) => a.seq - b.seq);
    mine.forEach((p, i) => {
      const row = signals[i];
      if (!row) return;
      const s = JSON.parse(row.payload) as {
        seq: number;
        displayName: string;
        observedAt: string;
        reportedAt: string | null;
        buckets: unknown[] | null;
      };
      if (s.reportedAt === new Date(p.reportAtMs).toISOString()) reportedAtOk++;
      if (p.phase === 'up') {
        toCommit.push(row.createdAt - p.atMs);
        const m = bot.messages.find((x) => x.text.startsWith(`isocast signal #${s.seq}: ${s.displayName},`));
        if (m) toBot.push(m.atMs - p.atMs);
      } else {
        if (s.buckets === null) nullBuckets++;
        downToCommit.push(row.createdAt - p.atMs);
        heldBack.push(row.createdAt - Date.parse(s.observedAt));
      }
    });
  }
  process.stdout.write(
    JSON.stringify({
      cities: cities.length,
      publications: PUBLICATIONS,
      meanGapMs: GAP_MS,
      pollIntervalMs: 5_000,
      oddsDeadlineMs: 10_000,
      committed: toCommit.length,
      pushed: toBot.length,
      reportedAtCorrect: reportedAtOk,
      toCommitMs: stats(toCommit),
      toBotMs: stats(toBot),
      budget: {
        ...budget,
        perHour: {
          metar: perHour(budget.metar),
          gamma: perHour(budget.gamma),
          gammaOtherCities: perHour(budget.gammaOtherCities),
        },
        crossings: PUBLICATIONS,
      },
      clobDown: {
        publications: DOWN,
        stored: downToCommit.length,
        nullBuckets,
        heldBackMs: stats(heldBack),
        toCommitMs: stats(downToCommit),
      },
    }) + '\n',
  );
} finally {
  db.close();
  await server.stop();
  await Promise.all([gamma.close(), clob.close(), metar.close(), bot.close()]);
  rmSync(dir, { recursive: true, force: true });
}
