import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFlags } from '../../src/lib/flags.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, loadDataDir } from '../../src/config.ts';
import { tempDir } from '../helpers/app.ts';
import { parseFlags, UsageError } from '../../src/lib/flags.ts';

const spec = { strings: ['city', 'count'], booleans: ['json'] };

test('both forms, booleans, last one wins', () => {
  const r = readFlags(['--city', 'nyc', '--count=3', '--json', '--city=chi', '--count', '-1'], spec);
  assert.deepEqual(r.problems, []);
  assert.deepEqual(r.values, { city: 'chi', count: '-1' });
  assert.deepEqual([...r.on], ['json']);
  assert.deepEqual(readFlags(['--city='], spec).values, { city: '' }, 'an empty inline value is a value');
});

test('every problem at once, each worded once', () => {
  const r = readFlags(
    ['--nope', '1', 'stray', '-x', '--city', '--json=1', '--count', '--bad=2', '-ab', '--count'],
    spec,
  );
  assert.deepEqual(r.problems, [
    'unknown flag: --nope',
    'unexpected argument: stray',
    'unexpected argument: -x',
    '--city needs a value',
    '--json takes no value',
    '--count needs a value',
    'unknown flag: --bad',
    'unexpected argument: -ab',
    '--count needs a value',
  ]);
  assert.deepEqual([...r.on], ['json'], 'a flag taken as a missing value is still read as a flag');
  assert.deepEqual(readFlags(['--', '--city'], spec).problems, [
    'unexpected argument: --',
    'unexpected argument: --city',
  ]);
});

test('refused flags are a problem with or without a value, and never a value', () => {
  const refuse = (n: string) => (n === 'count' ? 'no counts here' : null);
  const r = readFlags(['--count', '3', '--count=4', '--count'], { ...spec, refuse });
  assert.deepEqual(r.problems, ['no counts here', 'no counts here', 'no counts here']);
  assert.deepEqual(r.values, {});
});

/** What the server commands say about `argv`'s flags (backup and migrate read only those). */
function flagProblems(argv: string[]): string[] {
  try {
    loadDataDir({}, argv);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

test('serve and the buyer commands say the same thing about the same mistake', (t) => {
  const argv = ['--bogus', 'x', '--port'];
  const serve = flagProblems(argv);
  assert.deepEqual(serve, ['unknown flag: --bogus', '--port needs a value']);
  assert.throws(
    () => parseFlags(['--bogus', 'x', '--city'], spec),
    (e) => e instanceof UsageError && e.message === 'unknown flag: --bogus; --city needs a value',
  );
  const secretFile = join(tempDir(t), 'secret');
  writeFileSync(secretFile, `${'5e'.repeat(32)}\n`);
  const c = loadConfig({}, ['--server-secret-file', secretFile, '--data-dir=/d']);
  assert.deepEqual([c.SERVER_SECRET, c.DATA_DIR], ['5e'.repeat(32), '/d']);
  assert.match(
    flagProblems(['--server-secret'])[0]!,
    /^--server-secret: secrets are not accepted as command-line flags/,
  );
});

test('serve exits 2 on an unknown flag, like the buyer commands', () => {
  const r = spawnSync(process.execPath, ['src/main.ts', 'serve', '--bogus', '1'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'config: unknown flag: --bogus\n');
});
