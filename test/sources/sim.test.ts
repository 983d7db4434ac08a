import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createCatalog } from '../../src/cities/catalog.ts';
import { manualClock } from '../helpers/clock.ts';
import { openDb } from '../../src/db/open.ts';
import { localDayBounds } from '../../src/lib/local-day.ts';
import { dailyHighReading } from '../../src/buckets/daily-high.ts';
import { bucketFor, isDead } from '../../src/buckets/labels.ts';
import { createSimClock, createSimWeather, curveC, simDay, simObservations } from '../../src/sources/sim/model.ts';
import { createSimMarket, normalCdf } from '../../src/sources/market/sim.ts';
import { tempDir } from '../helpers/app.ts';

const catalog = createCatalog();
const nyc = catalog.get('nyc')!;
const wellington = catalog.get('wellington')!;
const singapore = catalog.get('singapore')!;

test('the simulated world is deterministic from the seed and differs between seeds', () => {
  const until = Date.parse('2026-07-16T04:00:00Z');
  assert.deepEqual(
    simObservations('s1', { city: nyc, date: '2026-07-15', untilMs: until }),
    simObservations('s1', { city: nyc, date: '2026-07-15', untilMs: until }),
  );
  assert.notDeepEqual(
    simObservations('s1', { city: nyc, date: '2026-07-15', untilMs: until }),
    simObservations('s2', { city: nyc, date: '2026-07-15', untilMs: until }),
  );
});

test('diurnal curve: coolest near dawn, warmest at 15:00 local, observations only inside the local day and up to now', () => {
  const day = simDay('seed', nyc, '2026-07-15');
  assert.ok(Math.abs(curveC(day, 15) - day.highC) < 1e-9);
  assert.ok(Math.abs(curveC(day, 6) - day.lowC) < 1e-9);
  for (let h = 0; h < 24; h += 0.5) assert.ok(curveC(day, h) <= day.highC + 1e-9 && curveC(day, h) >= day.lowC - 1e-9);
  const { startMs, endMs } = localDayBounds(nyc.timezone, '2026-07-15');
  const obs = simObservations('seed', { city: nyc, date: '2026-07-15', untilMs: endMs + 3_600_000 });
  assert.equal(obs.length, 72);
  assert.ok(
    obs.every((o) => o.atMs >= startMs && o.atMs < endMs && o.unit === 'C' && Math.round(o.temp * 10) === o.temp * 10),
  );
  const warmest = obs.reduce((a, b) => (b.temp > a.temp ? b : a));
  const localHour = (warmest.atMs - startMs) / 3_600_000;
  assert.ok(localHour > 12 && localHour < 18, `peak at ${localHour}`);
  assert.equal(simObservations('seed', { city: nyc, date: '2026-07-15', untilMs: startMs + 3_600_000 }).length, 3);
});

test('seasons follow the hemisphere: NYC is warmer in July, Wellington in January; Singapore barely changes', () => {
  const avg = (city: typeof nyc, month: string) => {
    let s = 0;
    for (let d = 1; d <= 28; d++) s += simDay('seed', city, `2026-${month}-${String(d).padStart(2, '0')}`).highC;
    return s / 28;
  };
  assert.ok(avg(nyc, '07') - avg(nyc, '01') > 15);
  assert.ok(avg(wellington, '01') - avg(wellington, '07') > 4);
  assert.ok(Math.abs(avg(singapore, '01') - avg(singapore, '07')) < 3);
});

test('sim market: 11 buckets around the forecast, odds that respond to the reading', async () => {
  const sim = manualClock(Date.parse('2026-07-15T13:00:00Z')); // 09:00 in New York
  const real = manualClock(Date.parse('2030-01-01T00:00:00Z'));
  const market = createSimMarket({ seed: 'seed', simClock: sim, real });
  const ev = (await market.event(nyc, '2026-07-15'))!;
  assert.equal(ev.buckets.length, 11);
  assert.equal(ev.url, 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026');
  assert.match(ev.conditionId!, /^0x[0-9a-f]{64}$/);
  assert.equal(ev.buckets[0]!.lo, Number.NEGATIVE_INFINITY);
  assert.equal(ev.buckets[10]!.hi, Number.POSITIVE_INFINITY);
  const forecastF = simDay('seed', nyc, '2026-07-15').forecastC * 1.8 + 32;
  assert.equal(bucketFor(forecastF, ev.buckets), ev.buckets[5], 'the forecast sits in the middle bucket');

  const morning = await market.odds(nyc, '2026-07-15', { event: ev });
  assert.equal(morning.asOfMs, real.now(), 'odds are stamped with real time');
  sim.set(Date.parse('2026-07-15T23:00:00Z')); // 19:00, after the peak
  const evening = await market.odds(nyc, '2026-07-15', { event: ev });
  const high = dailyHighReading(simObservations('seed', { city: nyc, date: '2026-07-15', untilMs: sim.now() }), {
    timezone: nyc.timezone,
    date: '2026-07-15',
    unit: 'F',
  })!;
  const holding = bucketFor(high, ev.buckets)!;
  for (const b of ev.buckets) {
    const o = evening.byLabel.get(b.label)!;
    assert.ok(
      o.yes >= 0.001 && o.yes <= 0.999 && o.no >= 0.001 && o.no <= 0.999 && o.midpoint >= 0.001 && o.midpoint <= 0.999,
    );
    assert.ok(o.yes >= o.midpoint && o.no >= 1 - o.midpoint - 1e-9, 'asks sit above fair value');
    if (isDead(b, high)) assert.ok(o.yes <= 0.002, `dead ${b.label} trades near zero`);
  }
  assert.ok(
    evening.byLabel.get(holding.label)!.midpoint > 0.5,
    'after the peak the bucket holding the high is favourite',
  );
  const sum = (s: typeof morning) => [...s.byLabel.values()].reduce((a, o) => a + o.midpoint, 0);
  assert.ok(Math.abs(sum(morning) - 1) < 0.03 && Math.abs(sum(evening) - 1) < 0.03);
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7 && Math.abs(normalCdf(1.96) - 0.975) < 1e-3);
});

test('sim clock: accelerated, persisted across restarts, re-anchored when the speed changes', (t) => {
  const path = join(tempDir(t), 'isocast.db');
  const real = manualClock(Date.parse('2026-07-15T12:00:00Z'));
  let db = openDb(path);
  const c1 = createSimClock(db, { speed: 60, real });
  assert.equal(c1.now(), real.now());
  real.advance(60_000);
  assert.equal(c1.now(), Date.parse('2026-07-15T13:00:00Z'));
  db.close();
  real.advance(60_000);
  db = openDb(path);
  t.after(() => db.close());
  assert.equal(
    createSimClock(db, { speed: 60, real }).now(),
    Date.parse('2026-07-15T14:00:00Z'),
    'time kept moving while stopped',
  );
  const c3 = createSimClock(db, { speed: 1, real });
  assert.equal(c3.now(), Date.parse('2026-07-15T14:00:00Z'));
  real.advance(60_000);
  assert.equal(c3.now(), Date.parse('2026-07-15T14:01:00Z'));
});

test('sim weather returns every requested city', async () => {
  const simClock = { ...manualClock(Date.parse('2026-07-15T20:00:00Z')), realAt: (simMs: number) => simMs };
  const weather = createSimWeather({ seed: 'seed', simClock });
  const out = await weather.observe(catalog.active.map((city) => ({ city, date: '2026-07-15' })));
  assert.equal(out.size, 37);
  assert.equal(weather.name, 'sim');
});

test('sim clock warm-up: a fresh database runs its first simulated day in the warm-up, then SIM_SPEED; restarts keep it', (t) => {
  const db = openDb(join(tempDir(t), 'warm.db'));
  const start = Date.parse('2026-07-15T12:00:00Z');
  const real = manualClock(start);
  const c1 = createSimClock(db, { speed: 60, real, warmUpRealMs: 150_000 });
  assert.equal(c1.now(), start);
  real.advance(75_000);
  assert.equal(c1.now(), start + 43_200_000, 'half the warm-up is half a simulated day');
  // A restart in the middle of the warm-up continues it.
  assert.equal(createSimClock(db, { speed: 60, real, warmUpRealMs: 150_000 }).now(), start + 43_200_000);
  real.advance(75_000);
  assert.equal(c1.now(), start + 86_400_000);
  real.advance(1_000);
  assert.equal(c1.now(), start + 86_400_000 + 60_000, 'then SIM_SPEED');
  // An existing anchor never warms up again.
  const db2 = openDb(join(tempDir(t), 'cold.db'));
  const c2 = createSimClock(db2, { speed: 60, real });
  real.advance(1_000);
  assert.equal(createSimClock(db2, { speed: 60, real, warmUpRealMs: 150_000 }).now(), c2.now());
});
