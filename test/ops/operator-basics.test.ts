import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CONFIG_SHAPE } from '../../src/config.ts';
import { manualClock } from '../helpers/clock.ts';
import { createSimClock } from '../../src/sources/sim/model.ts';
import { VERSION } from '../../src/version.ts';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { inParallel, runMain } from '../helpers/main-process.ts';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['src/main.ts', ...args], { encoding: 'utf8', timeout: 30_000 });

test('-v and -h work as the first argument, like --version and --help; help never points to a README', async () => {
  // Four real entry-point runs side by side: each waits mostly on its own Node start-up.
  const [v, version, h, help] = await inParallel(
    ['-v', '--version', '-h', '--help'].map((flag) => () => runMain([flag], { timeoutMs: 60_000 })),
  );
  for (const r of [v!, version!]) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `isocast ${VERSION}\n`);
  }
  for (const r of [h!, help!]) {
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^isocast .*\n\nUsage: isocast <command>/);
    assert.match(r.stdout, /isocast help config/);
    assert.ok(!/README/.test(r.stdout), 'the binary ships without a README');
  }
});

test('isocast help config lists every variable with its default and meaning', () => {
  const r = cli('help', 'config');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!/README/.test(r.stdout));
  for (const key of Object.keys(CONFIG_SHAPE))
    assert.match(r.stdout, new RegExp(`^  ${key} +\\S.*\\n +default: \\S`, 'm'), key);
  const defaultOf = (key: string) => new RegExp(`^  ${key} +\\S.*\\n +default: (.*)$`, 'm').exec(r.stdout)?.[1];
  // Literal defaults come from the schema itself.
  assert.equal(defaultOf('PORT'), '8402');
  assert.equal(defaultOf('SIM_SPEED'), '60');
  assert.equal(defaultOf('GAMMA_URL'), 'https://gamma-api.polymarket.com');
  assert.equal(defaultOf('ADMIN_TOKEN'), 'unset: /admin and /metrics off (404)');
  assert.match(r.stdout, /ADMIN_TOKEN_FILE/);
});

test('with the simulated feed, targetDate follows the simulated clock the signals use', (t) => {
  const real = Date.parse('2026-07-15T15:00:00Z');
  const e0 = testApp(t, { nowMs: real });
  // SIM_SPEED=60 for 30 real minutes: 30 simulated hours later, the next city-local day in Wellington.
  const anchor = manualClock(real - 30 * 60_000);
  const simClock = createSimClock(e0.db, { speed: 60, real: anchor });
  anchor.set(real);
  const e = testApp(t, { nowMs: real, deps: { dayClock: simClock } });
  return (async () => {
    const realDay = (await (await e0.app.request('/v1/cities/nyc')).json()) as { targetDate: string };
    const simDay = (await (await e.app.request('/v1/cities/nyc')).json()) as { targetDate: string };
    assert.equal(realDay.targetDate, '2026-07-15');
    assert.equal(simDay.targetDate, new Date(simClock.now() - 4 * 3_600_000).toISOString().slice(0, 10));
    assert.equal(simDay.targetDate, '2026-07-16');
  })();
});

test('/v1/cities?sort=recent puts the cities whose latest signal is newest first', async (t) => {
  const e = testApp(t);
  insertSignals(e.db, 'nyc', 3);
  await new Promise((r) => setTimeout(r, 5));
  insertSignals(e.db, 'wellington', 1);
  const body = (await (await e.app.request('/v1/cities?sort=recent')).json()) as {
    cities: { slug: string; latestSeq: number }[];
    count: number;
  };
  assert.deepEqual(
    body.cities.slice(0, 2).map((c) => [c.slug, c.latestSeq]),
    [
      ['wellington', 1],
      ['nyc', 3],
    ],
  );
  assert.equal(body.count, 37);
  assert.ok(body.cities.slice(2).every((c) => c.latestSeq === 0));
  const plain = (await (await e.app.request('/v1/cities')).json()) as { cities: { slug: string }[] };
  assert.notEqual(plain.cities[0]!.slug, 'wellington', 'the default order is unchanged');
  const bad = await e.app.request('/v1/cities?sort=oldest');
  assert.equal(bad.status, 400);
  assert.ok(((await bad.json()) as { disclaimer?: string }).disclaimer);
});
