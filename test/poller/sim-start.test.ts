import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createCatalog } from '../../src/cities/catalog.ts';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/db/open.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { isValidDate, localDate } from '../../src/lib/local-day.ts';
import { createPoller } from '../../src/poller/poller.ts';
import { createFeed } from '../../src/poller/feed.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { tempDir } from '../helpers/app.ts';
import { createStores } from '../../src/stores.ts';

/**
 * With the default configuration (FEED=sim, SIM_SPEED, POLL_INTERVAL_MS), a fresh start shows
 * signals within two minutes of real time, whatever the hour it starts at.
 */
test('default sim feed: a fresh start signals within two minutes at any start hour', async (t) => {
  const dir = tempDir(t);
  const config = loadConfig({ DATA_DIR: dir });
  assert.equal(config.FEED, 'sim');
  const catalog = createCatalog();
  for (const startIso of [
    '2026-01-10T00:00:00Z',
    '2026-04-02T07:00:00Z',
    '2026-07-15T14:00:00Z',
    '2026-10-20T19:00:00Z',
  ]) {
    const db = openDb(join(dir, `${startIso.slice(0, 10)}.db`));
    const clock = manualClock(Date.parse(startIso));
    const feed = await createFeed(config, { db, clock, logger: memoryLogger() });
    const poller = createPoller({
      stores: createStores(db),
      catalog,
      clock,
      logger: memoryLogger(),
      intervalMs: config.POLL_INTERVAL_MS,
      ...feed,
    });
    const started = clock.now();
    let first: number | null = null;
    while (clock.now() - started <= 120_000) {
      const r = await poller.tick();
      assert.deepEqual(r.errors, []);
      const s = r.signals[0];
      if (s) {
        first = clock.now() - started;
        assert.deepEqual(signalSchema().parse(s), s);
        assert.equal(s.seq, 1);
        const city = catalog.get(s.city)!;
        assert.ok(isValidDate(s.targetDate));
        assert.equal(
          s.targetDate,
          localDate(city.timezone, feed.dayClock.now()),
          'the market day is the city-local day of simulated time',
        );
        assert.equal(s.observedAt, new Date(clock.now()).toISOString(), 'signal stamps are real time');
        assert.ok(s.reportedAt !== null && s.reportedAt <= s.observedAt, `reportedAt ${s.reportedAt} after observedAt`);
        assert.ok(Date.parse(s.observedAt) - Date.parse(s.reportedAt) < 60_000, 'the report is seconds old, not hours');
        break;
      }
      clock.advance(config.POLL_INTERVAL_MS);
    }
    db.close();
    assert.ok(first !== null && first <= 120_000, `first signal after ${first} ms from ${startIso}`);
  }
});

/**
 * The quick start tells a newcomer to pick a city with `latestSeq >= 2` (its sample is then a
 * real signal): on a fresh start every city gets there within three minutes (the warm-up in
 * src/sources/sim/model.ts; without it a city past its afternoon waited up to 18 minutes).
 */
test('default sim feed: every city reaches seq 2 within three minutes of a fresh start', async (t) => {
  const dir = tempDir(t);
  const config = loadConfig({ DATA_DIR: dir });
  const catalog = createCatalog();
  for (const startIso of ['2026-01-18T18:17:00Z']) {
    const db = openDb(join(dir, `seq2-${startIso.slice(0, 10)}.db`));
    const clock = manualClock(Date.parse(startIso));
    const feed = await createFeed(config, { db, clock, logger: memoryLogger() });
    const poller = createPoller({
      stores: createStores(db),
      catalog,
      clock,
      logger: memoryLogger(),
      intervalMs: config.POLL_INTERVAL_MS,
      ...feed,
    });
    const started = clock.now();
    const reached = new Set<string>();
    while (clock.now() - started <= 180_000 && reached.size < catalog.active.length) {
      for (const s of (await poller.tick()).signals) if (s.seq >= 2) reached.add(s.city);
      clock.advance(config.POLL_INTERVAL_MS);
    }
    db.close();
    const missing = catalog.active.map((c) => c.slug).filter((s) => !reached.has(s));
    assert.deepEqual(missing, [], `cities below seq 2 three minutes after ${startIso}`);
  }
});
