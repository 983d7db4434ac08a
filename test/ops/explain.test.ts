import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openReadOnly } from '../../src/db/open.ts';
import { EXPLAIN_USAGE, explainArgs, formatExplain, readDay } from '../../src/ops/explain.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { tempDir } from '../helpers/app.ts';
import { harness } from '../poller/harness.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * `isocast explain` against signals the real poller stored from the fake METAR (raw report,
 * T-group value, receiptTime), read back on a read-only connection and by the command itself.
 */
const run = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, ['src/main.ts', 'explain', ...args], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: env.DATA_DIR ?? '/nonexistent',
      ...compileCacheEnv(),
      ...env,
    },
  });

test('explain prints each stored signal of the day: report, value, reading, buckets, odds and every timestamp', async (t) => {
  const h = await harness(t);
  h.report(20.0, 30);
  await h.poller.tick();
  const obsAt = h.env.clock.now() - 6 * 60_000;
  h.metar.addReport('KLGA', { atMs: obsAt, tempC: 21.2, availableAtMs: obsAt + 190_000 });
  h.env.clock.advance(3_000);
  const [first] = (await h.poller.tick()).signals;
  h.env.clock.advance(60_000);
  h.metar.addReport('KLGA', { atMs: h.env.clock.now() - 4 * 60_000, tempC: 22.4 }); // 72.32 °F
  h.env.clock.advance(1_000);
  const [second] = (await h.poller.tick()).signals;
  assert.ok(first && second);
  const date = first.targetDate;

  const ro = openReadOnly(join(h.env.dir, 'isocast.db'));
  t.after(() => ro.close());
  const rows = readDay(ro, { city: 'nyc', date });
  assert.deepEqual(
    rows.map((r) => r.signal),
    [first, second],
    'the payloads exactly as stored and served',
  );
  const text = formatExplain(rows, { city: 'nyc', date });
  assert.match(text, new RegExp(`^nyc \\(NYC\\) ${date}: 2 signal\\(s\\)\\n`));
  assert.match(text, /#1 {2}68-69°F -> 70-71°F {3}reading 68 -> 70 °F/);
  assert.match(text, /source {4}metar via metar-api/);
  assert.match(text, /report {4}METAR KLGA \d{6}Z .*T02120\d{3}/);
  assert.match(text, /value {5}21\.2 °C \(tenths\) = 70\.16 °F -> reading 70 °F/);
  assert.match(text, /70-71°F .*yes 0\.\d{3} {2}no 0\.\d{3} {2}mid 0\.\d{3} {2}<- entered/);
  assert.match(text, new RegExp(`reported {3}${first.reportedAt} `));
  assert.match(text, new RegExp(`available {2}${first.availableAt} +\\+3 min 10 s +the source's receipt time`));
  // Published 170 s before the tick and seen 3 s into it: the poll wait shows as ours.
  assert.match(text, new RegExp(`observed {3}${first.observedAt} +\\+2 min 53 s +our poll saw it`));
  assert.match(text, new RegExp(`stored {5}${first.storedAt} `));
  assert.match(text, /#2 {2}70-71°F -> 72-73°F/);
  // The fake stamps receiptTime at the report's own time when it is not told otherwise.
  assert.match(text, /value {5}22\.4 °C \(tenths\) = 72\.32 °F -> reading 72 °F/);
  assert.equal(
    formatExplain([], { city: 'nyc', date }),
    `nyc ${date}: no signals stored for this city and market day\n`,
  );

  // The command: read-only, the same text; --json the stored payloads.
  const env = { DATA_DIR: h.env.dir };
  const out = run(['nyc', date], env);
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout, text);
  const json = run(['nyc', date, '--json'], env);
  assert.equal(json.status, 0, json.stderr);
  const parsed = JSON.parse(json.stdout) as unknown[];
  assert.deepEqual(
    parsed.map((s) => signalSchema().parse(s)),
    [first, second],
  );
  const none = run(['london', date], env);
  assert.deepEqual([none.status, none.stdout], [0, `london ${date}: no signals stored for this city and market day\n`]);
});

test('explain: usage and exit codes', (t) => {
  assert.deepEqual(explainArgs(['nyc']), { problem: EXPLAIN_USAGE });
  assert.deepEqual(explainArgs(['NYC;rm', '2026-07-15']), { problem: 'not a city slug: "NYC;rm"' });
  assert.deepEqual(explainArgs(['nyc', '2026-02-30']), { problem: 'not a date (YYYY-MM-DD): "2026-02-30"' });
  assert.deepEqual(explainArgs(['nyc', '2026-07-15', '--json', '--data-dir', '/x']), {
    city: 'nyc',
    date: '2026-07-15',
    json: true,
    rest: ['--data-dir', '/x'],
  });
  const dir = tempDir(t);
  const usage = run(['nyc'], { DATA_DIR: dir });
  assert.deepEqual([usage.status, usage.stderr], [2, `${EXPLAIN_USAGE}\n`]);
  const bad = run(['nyc', '15/07/2026'], { DATA_DIR: dir });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /not a date/);
  const missing = run(['nyc', '2026-07-15'], { DATA_DIR: dir });
  assert.deepEqual(
    [missing.status, missing.stderr],
    [1, `isocast explain: no database at ${join(dir, 'isocast.db')}\n`],
  );
});
