import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnvFile } from '../../src/lib/env-file.ts';
import { tempDir } from '../helpers/app.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * deploy/ as shipped: the units pass systemd's own verifier, the backup unit's command line works
 * with the example env file (which recommends the admin token as a service credential a backup
 * cannot read), and the example env file's problems are reported in one run.
 */
const ANALYZE = '/usr/bin/systemd-analyze';
const REPO = resolve('.');

/** A stand-in for /usr/local/bin/isocast that runs this checkout. */
function isocastWrapper(dir: string): string {
  const path = join(dir, 'isocast');
  writeFileSync(path, `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, 'src/main.ts')}" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

function unitValues(unit: string, key: string): string[] {
  return [...readFileSync(join('deploy', unit), 'utf8').matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!);
}

test('systemd-analyze verify accepts the three units', (t) => {
  if (!existsSync(ANALYZE)) {
    t.skip(`${ANALYZE} is not installed (apt-get install systemd): the units were not verified`);
    return;
  }
  const dir = tempDir(t);
  const bin = isocastWrapper(dir);
  for (const f of ['isocast.service', 'isocast-backup.service', 'isocast-backup.timer'])
    writeFileSync(join(dir, f), readFileSync(join('deploy', f), 'utf8').replaceAll('/usr/local/bin/isocast', bin));
  const r = spawnSync(
    ANALYZE,
    ['verify', '--man=no', './isocast.service', './isocast-backup.service', './isocast-backup.timer'],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'no warnings');
});

test("the backup unit's command line runs with the example env file and the recommended admin-token credential", (t) => {
  const dir = tempDir(t);
  const bin = isocastWrapper(dir);
  const data = join(dir, 'var-lib-isocast', 'data');
  const backups = join(dir, 'backups');
  mkdirSync(backups);
  // The environment systemd gives the unit: its Environment= lines, then EnvironmentFile= over them.
  const unitEnv: Record<string, string> = {};
  for (const line of unitValues('isocast-backup.service', 'Environment')) {
    const [k, ...v] = line.split('=');
    unitEnv[k!] = v.join('=').replace('/var/lib/isocast/data', data).replace('/var/cache/isocast', join(dir, 'cache'));
  }
  const example = parseEnvFile(readFileSync('deploy/env.example', 'utf8'));
  // What env.example recommends instead of ADMIN_TOKEN: a credential only the service can read.
  delete example.ADMIN_TOKEN;
  example.ADMIN_TOKEN_FILE = '/run/credentials/isocast.service/admin-token';
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...unitEnv, ...example };
  const migrate = spawnSync(bin, ['migrate'], { env, encoding: 'utf8' });
  assert.equal(migrate.status, 0, migrate.stderr);

  const [execStart] = unitValues('isocast-backup.service', 'ExecStart');
  const m = /^\/bin\/sh -c '(.*)'$/.exec(execStart!);
  assert.ok(m, execStart);
  // systemd's own unescaping of the unit line: $$ -> $, %% -> %.
  const script = m[1]!
    .replaceAll('$$', '$')
    .replaceAll('%%', '%')
    .replaceAll('/usr/local/bin/isocast', bin)
    .replaceAll('/var/backups/isocast', backups);
  const r = spawnSync('/bin/sh', ['-c', script], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^backup written to .*isocast-\d{8}T\d{6}Z\.db: \d+ pages, integrity ok\n$/);
  assert.equal(readdirSync(backups).filter((f) => /^isocast-\d{8}T\d{6}Z\.db$/.test(f)).length, 1);
});

test('the example env file as shipped: serve reports all of its problems in one run (exit 2)', (t) => {
  const dir = tempDir(t);
  const r = spawnSync(process.execPath, ['src/main.ts', '--env-file', 'deploy/env.example', 'serve'], {
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), DATA_DIR: join(dir, 'data') },
    encoding: 'utf8',
  });
  assert.equal(r.status, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.ok(
    lines.some((l) => l.startsWith('config: PAY_TO: ')),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => l.startsWith('config: ADMIN_TOKEN: is the example value')),
    r.stderr,
  );
  assert.ok(
    lines.some((l) => l.startsWith('config: OFAC_LIST_PATH: cannot read sanctions list /etc/isocast/sdn.txt')),
    r.stderr,
  );
  assert.ok(
    lines.every((l) => l.startsWith('config: ')),
    r.stderr,
  );
  assert.equal(existsSync(join(dir, 'data')), false, 'nothing created');
});

test('--env-file reads values as systemd does, where a shell `.` would fail', (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data dir');
  const file = join(dir, 'env');
  writeFileSync(file, `FACILITATOR_AUTH=Bearer abc\nDATA_DIR=${data}\n`);
  const sh = spawnSync('/bin/sh', ['-c', `set -a; . '${file}'; echo "$FACILITATOR_AUTH"`], { encoding: 'utf8' });
  assert.notEqual(sh.stdout.trim(), 'Bearer abc', 'a shell reads it differently');
  const r = spawnSync(process.execPath, ['src/main.ts', '--env-file', file, 'migrate'], {
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv() },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(join(data, 'isocast.db')));
});
