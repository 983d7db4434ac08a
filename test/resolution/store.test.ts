import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { CITY_ROWS } from '../../src/cities/catalog.ts';
import { judgeRule } from '../../src/resolution/judge.ts';
import type { ResolutionRule } from '../../src/sources/market/resolution-rule.ts';
import { tempDir } from '../helpers/app.ts';
import { createStores } from '../../src/stores.ts';

const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
const WU: ResolutionRule = {
  source: 'wu',
  kind: 'wu-table',
  station: 'KLGA',
  unit: 'F',
  precision: 1,
  fallback: null,
  url: 'https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA',
};
const NOAA: ResolutionRule = {
  ...WU,
  source: 'noaa',
  kind: 'noaa-all',
  fallback: 'wu',
  url: 'https://www.weather.gov/wrh/timeseries?site=klga',
};

test('within a day the first rule and the first feed hold: a change of either pauses the day', (t) => {
  const db = openDb(join(tempDir(t), 'r.db'));
  t.after(() => db.close());
  const settle = (rule: ResolutionRule, feed: string | null, canObserve = true, date = '2026-07-15') =>
    createStores(db).rules.settle({
      city: 'nyc',
      date,
      rule,
      verdict: judgeRule(rule, nyc, () => canObserve),
      feed,
      nowMs: 1,
    });

  const a = settle(WU, 'wu');
  assert.deepEqual([a.status, a.observedWith, a.newlyPaused], ['ok', 'wu', false]);
  assert.deepEqual([settle(WU, 'wu').status, settle(WU, 'wu').newlyPaused], ['ok', false]);

  const changed = settle(NOAA, 'metar');
  assert.deepEqual([changed.status, changed.newlyPaused], ['paused', true]);
  assert.equal(changed.reason, 'rule changed during the day: wu KLGA °F first, now noaa KLGA °F');
  assert.equal(settle(NOAA, 'metar').newlyPaused, false, 'counted once');
  assert.equal(createStores(db).rules.read('nyc', '2026-07-15')!.source, 'wu', 'the first rule is kept');

  // Back to the first rule but another feed: still paused, now for the feed.
  const feed = settle(WU, 'metar');
  assert.deepEqual(
    [feed.status, feed.reason],
    ['paused', 'the day is observed with wu; switching to metar would mix sources'],
  );
  assert.equal(settle(WU, 'wu').status, 'ok', 'the first feed again: the day continues');

  // A pause that is not about consistency is re-judged: a day that could not be observed resumes.
  const blind = settle(NOAA, null, false, '2026-07-16');
  assert.deepEqual([blind.status, blind.observedWith], ['paused', null]);
  assert.match(blind.reason!, /no weather feed configured for NOAA rules/);
  assert.deepEqual(
    createStores(db)
      .rules.paused('2026-07-16')
      .map((d) => d.targetDate),
    ['2026-07-16'],
  );
  const resumed = settle(NOAA, 'metar', true, '2026-07-16');
  assert.deepEqual([resumed.status, resumed.observedWith], ['ok', 'metar']);
  assert.deepEqual(createStores(db).rules.paused('2026-07-15'), []);
  assert.equal(createStores(db).rules.latest().get('nyc')!.targetDate, '2026-07-16');
});

test('doctor lists the paused city-days', async (t) => {
  const { runDoctor } = await import('../../src/ops/doctor.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const dir = tempDir(t);
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  const today = new Date().toISOString().slice(0, 10);
  const rule = { ...WU, station: 'KNYC' };
  createStores(db).rules.settle({
    city: 'nyc',
    date: today,
    rule,
    verdict: judgeRule(rule, nyc, () => true),
    feed: null,
    nowMs: Date.now(),
  });
  db.close();
  const checks = await runDoctor({ config: loadConfig({ DATA_DIR: dir }), openDb: () => openDb(path), dbPath: path });
  const check = checks.find((c) => c.name === 'resolution rules')!;
  assert.equal(check.status, 'warn');
  assert.equal(
    check.detail,
    `1 city-day(s) paused (no signals): nyc ${today}: rule names station KNYC, the catalog watches KLGA`,
  );
});
