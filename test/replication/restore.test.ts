import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { lockDataDir } from '../../src/db/files.ts';
import { restoreArgs } from '../../src/replication/restore.ts';
import { LITESTREAM } from '../chaos/replica-drill.ts';
import { replicaWithData } from './helpers.ts';

const SECRET = 'cd'.repeat(32);

/** `isocast restore [--timestamp T]` with DATA_DIR=dir and `env`: its exit code and output. */
function restoreCli(dir: string, env: Record<string, string>, timestamp?: string) {
  const args = ['src/main.ts', 'restore', ...(timestamp ? ['--timestamp', timestamp] : [])];
  return new Promise<{ code: number; out: string; err: string }>((resolve) => {
    execFile(process.execPath, args, { env: { ...process.env, DATA_DIR: dir, ...env } }, (error, out, err) =>
      resolve({ code: error ? Number(error.code) : 0, out, err }),
    );
  });
}

test('--timestamp takes ISO 8601 with a zone and nothing else', () => {
  assert.deepEqual(restoreArgs(['--timestamp', '2026-11-26T12:00:00Z', '--log-level', 'warn']), {
    timestamp: '2026-11-26T12:00:00.000Z',
    rest: ['--log-level', 'warn'],
  });
  assert.equal(restoreArgs(['--timestamp=2026-11-26T13:00:00+01:00']).timestamp, '2026-11-26T12:00:00.000Z');
  for (const bad of [['--timestamp'], ['--timestamp', 'yesterday'], ['--timestamp', '2026-11-26 12:00']])
    assert.match(restoreArgs(bad).problem ?? '', /--timestamp/);
});

test('restore refuses: no replica, a database present, no server secret, a server holding DATA_DIR', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'isocast-restore-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const { replica, before } = await replicaWithData(root);
  const env = { REPLICA_URL: replica, LITESTREAM_BIN: LITESTREAM, SERVER_SECRET: SECRET };
  const run = restoreCli;

  assert.equal((await run(join(root, 'a'), { SERVER_SECRET: SECRET })).code, 2);

  const full = join(root, 'full');
  mkdirSync(full);
  writeFileSync(join(full, 'isocast.db-wal'), 'x');
  const r1 = await run(full, env);
  assert.equal(r1.code, 1);
  assert.match(r1.err, /isocast\.db-wal exists; restore only writes into an empty DATA_DIR/);

  const r2 = await run(join(root, 'nosecret'), { REPLICA_URL: replica, LITESTREAM_BIN: LITESTREAM });
  assert.equal(r2.code, 1);
  assert.match(r2.err, /no server secret/);
  // The saved secret file copied back is enough.
  mkdirSync(join(root, 'secretfile'));
  writeFileSync(join(root, 'secretfile', 'server-secret'), SECRET);
  assert.equal((await run(join(root, 'secretfile'), { REPLICA_URL: replica, LITESTREAM_BIN: LITESTREAM })).code, 0);

  const held = join(root, 'held');
  const lock = lockDataDir(held);
  const r3 = await run(held, env);
  lock.release();
  assert.equal(r3.code, 1);
  assert.match(r3.err, /in use by another running isocast server/);
  assert.deepEqual(readdirSync(held).sort(), ['isocast-serve.lock']);

  const r4 = await run(join(root, 'old'), env, before);
  assert.equal(r4.code, 1);
  assert.match(r4.err, /holds no backup of this database at or before/);

  const ok = join(root, 'ok');
  const r5 = await run(ok, env);
  assert.equal(r5.code, 0, r5.err);
  assert.match(r5.out, /quick_check ok, schema v\d+, 0 applied payments, 0 signals/);
  assert.ok(!readdirSync(ok).some((f) => f.includes('.tmp')));
  // Restoring twice never overwrites.
  assert.equal((await run(ok, env)).code, 1);
});
