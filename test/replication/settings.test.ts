import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { describeReplica, litestreamYaml } from '../../src/replication/settings.ts';
import { LITESTREAM } from '../chaos/replica-drill.ts';

const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

test('REPLICA_URL: s3, sftp and a directory are accepted; anything else is refused with the three forms', () => {
  assert.equal(loadConfig({}).REPLICA_URL, undefined);
  assert.equal(loadConfig({ REPLICA_URL: '/mnt/disk2/isocast/' }).REPLICA_URL, '/mnt/disk2/isocast');
  const where = (url: string) => describeReplica({ REPLICA_URL: url, REPLICA_SYNC_INTERVAL_MS: 1_000 });
  assert.equal(where('file:///mnt/b'), 'file /mnt/b');
  assert.equal(where('s3://bucket/isocast/db'), 's3 bucket/isocast/db');
  assert.equal(where('sftp://ops@backup.example:2222/srv/isocast'), 'sftp ops@backup.example:2222:/srv/isocast');
  for (const bad of ['relative/dir', 'http://x/y', 'gs://b/p', 's3://k:s@bucket/p', 'sftp://host', 's3://b/p?x=1'])
    assert.match(problems({ REPLICA_URL: bad }).join('\n'), /^REPLICA_URL: /m, bad);
});

test('replica settings that contradict each other are refused at start', () => {
  assert.match(problems({ REPLICA_ENDPOINT: 'http://127.0.0.1:9000' }).join(), /set without REPLICA_URL/);
  assert.match(problems({ REPLICA_URL: '/srv/r', REPLICA_REGION: 'eu' }).join(), /only for s3/);
  assert.match(problems({ REPLICA_URL: 'sftp://ops@h/srv' }).join(), /REPLICA_SFTP_KEY_PATH: required/);
  assert.match(problems({ REPLICA_URL: 's3://b/p', REPLICA_ACCESS_KEY_ID: 'AK' }).join(), /set both or neither/);
  // A secret is not a flag (ps shows flags), and it takes _FILE like the others.
  assert.throws(
    () => loadConfig({ REPLICA_URL: 's3://b/p', REPLICA_ACCESS_KEY_ID: 'AK' }, ['--replica-secret-access-key', 'x']),
    (err: ConfigError) => err.problems.some((p) => /not accepted as command-line flags/.test(p)),
  );
  const dir = mkdtempSync(join(tmpdir(), 'isocast-rs-'));
  try {
    writeFileSync(join(dir, 'key'), 'wJalr$XUtnFEMI\n');
    writeFileSync(join(dir, 'key-id'), 'AKIDFROMFILE\n');
    const c = loadConfig({
      REPLICA_URL: 's3://b/p',
      REPLICA_ACCESS_KEY_ID_FILE: join(dir, 'key-id'),
      REPLICA_SECRET_ACCESS_KEY_FILE: join(dir, 'key'),
    });
    assert.equal(c.REPLICA_SECRET_ACCESS_KEY, 'wJalr$XUtnFEMI');
    // The key id is half of the credential: a _FILE too (a systemd credential holds the pair), never a flag.
    assert.equal(c.REPLICA_ACCESS_KEY_ID, 'AKIDFROMFILE');
    assert.throws(
      () => loadConfig({ REPLICA_URL: 's3://b/p' }, ['--replica-access-key-id', 'AK']),
      (err: ConfigError) => err.problems.some((p) => /not accepted as command-line flags/.test(p)),
    );
    assert.equal(describeReplica(c), 's3 b/p');
    assert.doesNotMatch(describeReplica({ ...c, REPLICA_ENDPOINT: 'https://u:pw@minio.local:9000' }), /pw/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the generated litestream.yml is read by Litestream 0.3.13 itself for each replica type', () => {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-yml-'));
  try {
    const cases = [
      { REPLICA_URL: join(dir, 'replica'), REPLICA_SYNC_INTERVAL_MS: 1000 },
      {
        REPLICA_URL: 's3://bucket/isocast',
        REPLICA_SYNC_INTERVAL_MS: 1000,
        REPLICA_ENDPOINT: 'http://127.0.0.1:9000',
        REPLICA_REGION: 'us-east-1',
        REPLICA_ACCESS_KEY_ID: 'AK"ID',
        REPLICA_SECRET_ACCESS_KEY: 'se$cret\\"x',
      },
      {
        REPLICA_URL: 'sftp://ops@127.0.0.1:2222/srv/isocast',
        REPLICA_SYNC_INTERVAL_MS: 5000,
        REPLICA_SFTP_KEY_PATH: '/k',
      },
    ];
    for (const c of cases) {
      const yml = litestreamYaml(join(dir, 'isocast.db'), c);
      writeFileSync(join(dir, 'l.yml'), yml);
      const out = execFileSync(LITESTREAM, ['databases', '-config', join(dir, 'l.yml'), '-no-expand-env'], {
        encoding: 'utf8',
      });
      assert.match(out, new RegExp(`${join(dir, 'isocast.db')}\\s+replica`), c.REPLICA_URL);
    }
    // Upload starts at most REPLICA_SYNC_INTERVAL_MS after a commit: monitor 100 ms + sync 900 ms.
    const yml = litestreamYaml('/d/isocast.db', cases[0]!);
    assert.match(yml, /monitor-interval: 100ms/);
    assert.match(yml, /sync-interval: 900ms/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
