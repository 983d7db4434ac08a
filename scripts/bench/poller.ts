/**
 * Poller figures for `npm run bench`, against the local fake upstreams (test/fakes) over real HTTP
 * and a real SQLite file, with the real clock:
 *
 *   latency  an upstream change (a fake METAR report moving a city into its next bucket) ->
 *            the committed signal (onSignalCommitted) -> the fake Bot API receiving the push,
 *            through the production wiring: storeSignal's in-transaction outbox hook, wake() after
 *            commit, the delivery worker with production pacing, one subscribed chat per city.
 *   ticks    one tick's wall time over synthetic catalogs of 37, 370 and 3,700 cities (the 37
 *            active cities cloned with new slugs, market tokens and stations): steady (no
 *            crossing) and with every city crossing at once (one CLOB call and one signal
 *            transaction per city). The sources' rate limiters are lifted: they pace real
 *            upstreams, and would measure the politeness budget instead of our cost.
 *
 * node scripts/bench/poller.ts '{"changes":40,"intervalMs":1000,"sizes":[37,370,3700]}'  (one JSON line)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, type Catalog, type CityRecord } from '../../src/cities/catalog.ts';
import { addDays, localDate } from '../../src/lib/local-day.ts';
import { openDb } from '../../src/db/open.ts';
import { formatLabel } from '../../src/buckets/labels.ts';
import { convertTemp } from '../../src/buckets/rounding.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { BOT_API_LIMITS } from '../../src/delivery/pacer.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { createPoller } from '../../src/poller/poller.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { ruleText } from '../../src/sources/market/rule-text.ts';
import type { RateLimiter } from '../../src/sources/upstream.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../../test/fakes/gamma.ts';
import { startFakeClob } from '../../test/fakes/clob.ts';
import { startFakeMetar } from '../../test/fakes/metar.ts';
import { startFakeBotApi } from '../../test/fakes/bot-api.ts';
import { seed as seedRegistrations } from '../measure-delivery.ts';
import { median, percentile, round } from './util.ts';
import { sanctionsScreen } from '../../src/delivery/screen.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { createStores } from '../../src/stores.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { changes?: number; intervalMs?: number; sizes?: number[] };
const CHANGES = input.changes ?? 40;
const INTERVAL_MS = input.intervalMs ?? 1_000;
const SIZES = input.sizes ?? [37, 370, 3_700];
const logger = createLogger({ level: 'error', write: (l) => process.stderr.write(l + '\n') });
const unlimited: RateLimiter = { acquire: async () => {} };

/** The active cities cloned `n` times over with distinct slugs, market tokens and stations. */
export function syntheticCatalog(n: number): Catalog {
  const base = createCatalog().active;
  const rows: CityRecord[] = [];
  for (let i = 0; i < n; i++) {
    const c = base[i % base.length]!;
    const k = Math.floor(i / base.length);
    const code = [2, 1, 0].map((p) => String.fromCharCode(65 + (Math.floor(i / 26 ** p) % 26))).join('');
    // Same first letter keeps the fake's US (tenths) vs whole-degree report shape per clone.
    rows.push({
      ...c,
      slug: `${c.slug}-s${k}`,
      marketToken: `${c.marketToken}-s${k}`,
      station: `${c.station![0]}${code}`,
    });
  }
  return createCatalog(rows);
}

const FIRST = (c: CityRecord) => (c.unit === 'F' ? 60 : 10);
/** 11-bucket ladder starting at FIRST: an open lower end, nine inner buckets, an open upper end. */
function labels(c: CityRecord): string[] {
  const w = c.bucketWidth;
  const f = FIRST(c);
  const out = [formatLabel({ lo: Number.NEGATIVE_INFINITY, hi: f - 1, unit: c.unit })];
  for (let i = 0; i < 9; i++) out.push(formatLabel({ lo: f + i * w, hi: f + i * w + w - 1, unit: c.unit }));
  out.push(formatLabel({ lo: f + 9 * w, hi: Number.POSITIVE_INFINITY, unit: c.unit }));
  return out;
}
/** °C (tenths) whose resolved reading in the city's unit is `deg`. */
const toC = (c: CityRecord, deg: number) => Math.round(convertTemp(deg, c.unit, 'C') * 10) / 10;

async function upstreams(catalog: Catalog) {
  const [gamma, clob, metar] = await Promise.all([startFakeGamma(), startFakeClob(), startFakeMetar()]);
  const now = Date.now();
  for (const city of catalog.active) {
    const today = localDate(city.timezone, now);
    for (const date of [today, addDays(today, 1)]) {
      // The clone's own station in the rule text, as a live event names it; a generic text would
      // (rightly) pause every synthetic city since resolution rules are judged (issue 16).
      const ev = gammaEvent({
        token: city.marketToken,
        date,
        labels: labels(city),
        rule: ruleText(city, date, { kind: 'wu' }),
      });
      gamma.put(ev);
      for (const l of labels(city)) {
        const t = tokensOf(ev, l);
        clob.quote(t.yes, t.no, 0.09);
      }
    }
    metar.addReport(city.station!, { atMs: now - 120_000, tempC: toC(city, FIRST(city)) });
  }
  return { gamma, clob, metar, close: () => Promise.all([gamma.close(), clob.close(), metar.close()]) };
}

function sources(u: Awaited<ReturnType<typeof upstreams>>) {
  return {
    weather: createMetarWeather({ baseUrl: u.metar.url, clock: systemClock, limiter: unlimited }),
    market: createPolymarketSource({
      gammaUrl: u.gamma.url,
      clobUrl: u.clob.url,
      clock: systemClock,
      logger,
      gammaLimiter: unlimited,
      clobLimiter: unlimited,
    }),
  };
}

async function latency(dir: string) {
  const catalog = createCatalog();
  const cities = catalog.active;
  const u = await upstreams(catalog);
  const bot = await startFakeBotApi();
  const db = openDb(join(dir, 'latency.db'));
  const wallet = (i: number) => '0x' + (i + 1).toString(16).padStart(40, '0');
  seedRegistrations(
    db,
    cities.map((c, i) => ({ wallet: wallet(i), chat: String(500_000 + i), city: c.slug })),
    [],
  );
  const outbox = createOutbox(db, {
    clock: systemClock,
    screen: sanctionsScreen(loadSanctionsList({}), { required: false }),
    reader: createStores(db).reader,
  });
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: BOT_API_LIMITS });
  const worker = createDeliveryWorker({
    outbox,
    messenger,
    clock: systemClock,
    logger,
    termsUrl: 'https://isocast.example/terms.txt',
  });
  const changedAt = new Map<string, number>(); // city slug -> upstream change time (ms)
  // A chat gets at most one message per 1.1 s (pacing); changes to one city are spaced wider so
  // the figure is the pipeline, not the pacing.
  const lastChange = new Map<string, number>();
  const byMessage = new Map<string, number>(); // "<displayName>#<seq>" -> upstream change time
  const toCommit: number[] = [];
  const poller = createPoller({
    stores: createStores(db),
    catalog,
    clock: systemClock,
    logger,
    intervalMs: INTERVAL_MS,
    ...sources(u),
    onSignalInTransaction: outbox.enqueue,
    onSignalCommitted: (s) => {
      const t0 = changedAt.get(s.city);
      worker.wake();
      if (t0 === undefined) return;
      toCommit.push(Date.now() - t0);
      byMessage.set(`${s.displayName}#${s.seq}`, t0);
      changedAt.delete(s.city);
    },
  });
  worker.start();
  await poller.tick(); // baselines
  poller.start();
  const level = new Map(cities.map((c) => [c.slug, FIRST(c)]));
  for (let issued = 0; issued < CHANGES; ) {
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    const idle = cities.filter(
      (c) =>
        !changedAt.has(c.slug) &&
        Date.now() - (lastChange.get(c.slug) ?? 0) > 1_500 &&
        level.get(c.slug)! < FIRST(c) + 8 * c.bucketWidth,
    );
    const c = idle[Math.floor(Math.random() * idle.length)];
    if (!c) continue;
    const next = level.get(c.slug)! + c.bucketWidth;
    level.set(c.slug, next);
    changedAt.set(c.slug, Date.now());
    lastChange.set(c.slug, Date.now());
    u.metar.addReport(c.station!, { atMs: Date.now() - 1_000, tempC: toC(c, next) });
    issued++;
  }
  const messages = await bot.waitForMessages(CHANGES, 30_000).catch(() => bot.messages.slice());
  await poller.stop();
  await worker.stop();
  const toBot = messages.flatMap((m) => {
    const k = /signal #(\d+): (.+?), market day/.exec(m.text);
    const t0 = k ? byMessage.get(`${k[2]}#${k[1]}`) : undefined;
    return t0 === undefined ? [] : [m.atMs - t0];
  });
  await bot.close();
  await u.close();
  db.close();
  return {
    changes: CHANGES,
    pollIntervalMs: INTERVAL_MS,
    committed: toCommit.length,
    pushed: toBot.length,
    toCommitMs: { p50: percentile(toCommit, 50), p99: percentile(toCommit, 99), max: Math.max(...toCommit) },
    toBotMs: { p50: percentile(toBot, 50), p99: percentile(toBot, 99), max: Math.max(...toBot) },
  };
}

/** A poller over a synthetic catalog of `n` cities with its own fakes and database. */
async function tickRig(dir: string, n: number) {
  const catalog = syntheticCatalog(n);
  const u = await upstreams(catalog);
  const db = openDb(join(dir, `ticks-${n}.db`));
  const poller = createPoller({
    stores: createStores(db),
    catalog,
    clock: systemClock,
    logger,
    intervalMs: INTERVAL_MS,
    ...sources(u),
  });
  const datesNow = () => new Map(catalog.active.map((c) => [c.slug, localDate(c.timezone, Date.now())]));
  let lastDates = datesNow();
  const run = async () => {
    const r = await poller.tick();
    lastDates = datesNow();
    if (r.errors.length > 0)
      throw new Error(`tick over ${n} cities: ${r.errors.length} errors, first ${r.errors[0]!.error}`);
    return r;
  };
  const cold = await run();
  let level = 0;
  return {
    n,
    coldMs: cold.durationMs,
    steady: async () => (await run()).durationMs,
    /** Every city's reading moves one bucket up, so the tick stores n signals. */
    crossing: async () => {
      level++;
      const before = lastDates;
      for (const c of catalog.active)
        u.metar.addReport(c.station!, { atMs: Date.now() - 60_000, tempC: toC(c, FIRST(c) + level * c.bucketWidth) });
      const r = await run();
      // A city whose local midnight passed since its last reading starts a new day with this
      // reading as the baseline, which rightly emits nothing.
      const rolled = catalog.active.filter((c) => lastDates.get(c.slug) !== before.get(c.slug)).length;
      if (r.signals.length < n - rolled || r.signals.length > n)
        throw new Error(
          `crossing tick over ${n} cities stored ${r.signals.length} signals (${rolled} crossed local midnight)`,
        );
      return r.durationMs;
    },
    close: async () => {
      await u.close();
      db.close();
    },
  };
}

/** Sizes measured in alternation (rounds), so machine noise lands on every size alike. */
async function ticks(dir: string) {
  const rigs = [];
  for (const n of SIZES) rigs.push(await tickRig(dir, n));
  const steady = new Map<number, number[]>(rigs.map((r) => [r.n, []]));
  const crossing = new Map<number, number[]>(rigs.map((r) => [r.n, []]));
  // Medians of 9 and 5: with 5 and 3, one slow tick on this shared machine moved a run's
  // 3,700-vs-370 ratio from about 1.0 to 1.22.
  for (let round = 0; round < 9; round++) for (const r of rigs) steady.get(r.n)!.push(await r.steady());
  for (let round = 0; round < 5; round++) for (const r of rigs) crossing.get(r.n)!.push(await r.crossing());
  for (const r of rigs) await r.close();
  return rigs.map((r) => ({
    cities: r.n,
    coldMs: r.coldMs,
    steadyMs: median(steady.get(r.n)!),
    crossingMs: median(crossing.get(r.n)!),
  }));
}

const dir = mkdtempSync(join(tmpdir(), 'isocast-bench-poller-'));
try {
  const lat = await latency(dir);
  const sizes = await ticks(dir);
  const perCity = sizes.map((s) => ({
    cities: s.cities,
    coldMs: s.coldMs,
    steadyMs: s.steadyMs,
    crossingMs: s.crossingMs,
    steadyUsPerCity: round((s.steadyMs * 1000) / s.cities, 0),
    crossingUsPerCity: round((s.crossingMs * 1000) / s.cities, 0),
  }));
  process.stdout.write(JSON.stringify({ latency: lat, ticks: perCity }) + '\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
