import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { goDurationSeconds, interpretGenerations, replicaCheck } from '../../src/replication/doctor-check.ts';
import { createReplicaTracker, WARN_EVERY_MS } from '../../src/replication/tracker.ts';
import { LITESTREAM } from '../chaos/replica-drill.ts';
import { replicaWithData } from './helpers.ts';

test('lag is the age of the oldest commit no finished upload covers', () => {
  const t = createReplicaTracker();
  t.setUp({ up: true });
  assert.equal(t.status(1000).lagMs, 0);
  t.changed(1000);
  t.changed(1100);
  assert.equal(t.status(1500).lagMs, 500);
  t.uploadStarted(1050);
  // Begun after the first commit, before the second: only the first is covered.
  t.uploadWritten(1200);
  assert.equal(t.status(1500).lagMs, 400);
  assert.equal(t.status(1500).lastSyncAt, 1200);
  t.uploadStarted(1300);
  t.uploadWritten(1310);
  assert.equal(t.status(1500).lagMs, 0);
});

test('a stalled replica warns once a minute however often it fails, and says what happened since', () => {
  const t = createReplicaTracker();
  t.setUp({ up: true });
  t.changed(0);
  assert.equal(t.warning(5_000), null);
  for (let s = 1; s <= 120; s++) t.failed(s * 1000, 'monitor error: connection refused');
  const warnings = [];
  for (let now = 10_000; now <= 130_000; now += 100) {
    const w = t.warning(now);
    if (w) warnings.push({ now, ...w });
  }
  assert.equal(warnings.length, 3);
  assert.deepEqual(
    warnings.map((w) => w.now),
    [10_000, 10_000 + WARN_EVERY_MS, 10_000 + 2 * WARN_EVERY_MS],
  );
  assert.equal(
    warnings[0]!.failuresSinceLastWarning +
      warnings[1]!.failuresSinceLastWarning +
      warnings[2]!.failuresSinceLastWarning,
    120,
  );
  assert.equal(warnings[0]!.lastError, 'monitor error: connection refused');
  // Litestream down with commits waiting: a warning even before the stall threshold.
  const d = createReplicaTracker();
  d.changed(0);
  assert.equal(d.warning(100)?.up, false);
});

test("doctor reads Litestream's generations: lag, last sync, and a replica that holds nothing", async (t) => {
  assert.equal(goDurationSeconds('1m2.5s'), 62.5);
  assert.equal(goDurationSeconds('250ms'), 0.25);
  assert.equal(goDurationSeconds('0s'), 0);
  assert.equal(goDurationSeconds('soon'), null);
  const out = `name     generation        lag      start                 end
replica  0aa1  2m0s  2026-11-25T10:00:00Z  2026-11-25T11:00:00Z
replica  0bb2  1.5s  2026-11-26T10:00:00Z  2026-11-26T12:00:00Z
`;
  const r = interpretGenerations(out, Date.parse('2026-11-26T12:00:10Z'));
  assert.equal(r.status, 'ok');
  assert.equal(r.detail, 'generation 0bb2, last sync 2026-11-26T12:00:00Z (10 s ago), lag 1.5 s');
  assert.equal(interpretGenerations(out.replace('1.5s', '5m0s'), Date.now()).status, 'warn');
  assert.equal(interpretGenerations('name generation lag start end\n', Date.now()).status, 'fail');
  // A line Litestream printed before its header (an unanswered s3 replica) is not a generation.
  const noisy = `level=WARN msg="s3 retry" attempt=1 of=3\n${out}`;
  assert.equal(interpretGenerations(noisy, Date.parse('2026-11-26T12:00:10Z')).detail, r.detail);
  const onlyNoise = 'time=2026-11-26 msg=retry attempt 1\nname generation lag start end\n';
  assert.equal(interpretGenerations(onlyNoise, Date.now()).status, 'fail');

  const root = mkdtempSync(join(tmpdir(), 'isocast-doc-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const { replica } = await replicaWithData(root);
  const config = loadConfig({ DATA_DIR: join(root, 'src'), REPLICA_URL: replica, LITESTREAM_BIN: LITESTREAM });
  const live = await replicaCheck(config, join(root, 'src', 'isocast.db'));
  assert.equal(live.status, 'ok', live.detail);
  assert.match(
    live.detail,
    new RegExp(`^file ${replica}: generation [0-9a-f]{16}, last sync \\S+ \\(\\d+ s ago\\), lag \\d+\\.\\d s$`),
  );
  assert.equal((await replicaCheck(loadConfig({}), '/nowhere/isocast.db')).status, 'warn');
  const missing = await replicaCheck(
    loadConfig({ REPLICA_URL: replica, LITESTREAM_BIN: join(root, 'no-such-litestream') }),
    '/x/isocast.db',
  );
  assert.equal(missing.status, 'fail');
});
