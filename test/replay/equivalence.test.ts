import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CITY_ROWS, createCatalog } from '../../src/cities/catalog.ts';
import { openDb } from '../../src/db/open.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { createPoller } from '../../src/poller/poller.ts';
import type { SignalPublic } from '../../src/signals/schemas.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { startFakeClob } from '../fakes/clob.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../fakes/gamma.ts';
import { startFakeMetar } from '../fakes/metar.ts';
import { tempDir } from '../helpers/app.ts';
import { NYC_LABELS, START } from '../poller/harness.ts';
import { crossing, replay } from './helpers.ts';
import { createStores } from '../../src/stores.ts';

/**
 * The live poller (real SQLite store, fake Gamma/CLOB/METAR over HTTP, a hand-moved clock) ticks
 * 30 s after each new METAR; then the replay reads the very METAR JSON the fake serves for the
 * whole day. Both must emit the same signals: seq, old and new reading and bucket, and the replay's
 * triggering observation must be the one the poller saw just before its tick.
 */
const TICK_LAG_MS = 30_000;

type T = { after(fn: () => Promise<void> | void): void };

/** The poller as serve wires it for FEED=live + METAR, on a real SQLite file, against the fakes. */
async function livePoller(t: T) {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => {
    db.close();
  });
  const clock = manualClock(START);
  const [gamma, clob, metar] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: clock.now }),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close()]).then(() => undefined));
  const event = gammaEvent({ token: 'nyc', date: '2026-07-15', labels: NYC_LABELS, cityName: 'New York City' });
  gamma.put(event);
  for (const label of NYC_LABELS) {
    const tk = tokensOf(event, label);
    clob.quote(tk.yes, tk.no, 0.3);
  }
  const logger = memoryLogger();
  const poller = createPoller({
    stores: createStores(db),
    clock,
    logger,
    intervalMs: 1_000,
    catalog: createCatalog(CITY_ROWS.filter((c) => c.slug === 'nyc')),
    weather: createMetarWeather({ baseUrl: metar.url, clock, timeoutMs: 2_000 }),
    market: createPolymarketSource({
      gammaUrl: gamma.url,
      clobUrl: clob.url,
      clock,
      logger,
      gammaTimeoutMs: 2_000,
      clobTimeoutMs: 2_000,
    }),
  });
  t.after(() => poller.stop());
  return { db, clock, metar, event, poller };
}

async function compare(t: T, temps: number[], stepMs: number) {
  const h = await livePoller(t);
  const emitted: SignalPublic[] = [];
  for (let i = 0; i < temps.length; i++) {
    const atMs = START + i * stepMs;
    h.metar.addReport('KLGA', { atMs, tempC: temps[i]! });
    h.clock.set(atMs + TICK_LAG_MS);
    const report = await h.poller.tick();
    assert.deepEqual(report.errors, []);
    emitted.push(...report.signals);
  }

  const wire = await fetch(`${h.metar.url}/api/data/metar?ids=KLGA&format=json&hours=48`);
  const r = await replay(
    ['--city', 'nyc', '--date', '2026-07-15', '--observations', 'metar.json', '--market', 'event.json', '--json'],
    {
      files: { 'metar.json': await wire.text(), 'event.json': JSON.stringify([h.event]) },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.deepEqual(j.signals.map(crossing), emitted.map(crossing));
  assert.deepEqual(
    j.signals.map((s) => Date.parse(s.observedAt) + TICK_LAG_MS),
    emitted.map((s) => Date.parse(s.observedAt)),
  );
  const { targetDate, high, bucket } = createStores(h.db).signals.latestReadings().get('nyc')!;
  assert.deepEqual(
    { targetDate, high, bucket },
    { targetDate: '2026-07-15', high: j.final!.reading, bucket: j.final!.bucket },
  );
  return { emitted, result: j };
}

test('poller and replay: the same signals from a hand-made afternoon that runs past local midnight', async (t) => {
  const temps = [
    18.0, // 64.4 -> 64 °F, the open bottom: baseline
    18.9, // 66.02 -> 66: into 66-67
    19.4,
    19.7, // 67, 67 (67.46)
    19.75, // served as 19.8 (the fake keeps tenths, like ASOS): 67.64 -> 68
    21.4, // 70.52 -> 71: straight over to 70-71
    20.0, // cooler: the high stays
    22.5, // 72.5 -> 73 (half up)
    23.9,
    23.9, // 75.02 -> 75, and a duplicate report
    29.0, // 84.2 -> 84: the open top
    30.0, // still the open top
    31.0, // 87.8, but reported after local midnight (04:00Z): neither counts it
  ];
  // START is noon in New York; 65-minute steps put the last report at 01:00 the next day.
  const { emitted, result } = await compare(t, temps, 65 * 60_000);
  assert.deepEqual(
    emitted.map((s) => s.new.bucket),
    ['66-67°F', '68-69°F', '70-71°F', '72-73°F', '74-75°F', '84°F or higher'],
  );
  assert.equal(result.observations.outsideDay, 1);
  assert.deepEqual([result.final?.reading, result.final?.bucket], [86, '84°F or higher']);
});

test('poller and replay: the same signals from a seeded random walk', async (t) => {
  let seed = 20260715;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const temps: number[] = [];
  let c = 17.5;
  for (let i = 0; i < 40; i++) {
    c += (rand() - 0.35) * 1.5;
    temps.push(Math.round(c * 100) / 100);
  }
  // 40 reports 15 minutes apart stay inside the afternoon and evening of the 15th.
  const { emitted } = await compare(t, temps, 15 * 60_000);
  assert.ok(emitted.length >= 3, `the walk should cross a few buckets, crossed ${emitted.length}`);
});
