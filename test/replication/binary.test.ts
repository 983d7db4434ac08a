import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { findLitestream } from '../../src/replication/binary.ts';

type LitestreamSearch = Parameters<typeof findLitestream>[0];
import { LITESTREAM } from '../chaos/replica-drill.ts';

/**
 * The lookup of the Litestream that `npm install -g @flydotio/litestream` leaves (issue 38 item 3),
 * on temp-dir copies of npm's layouts: the package's `litestream` command is a Node wrapper
 * (bin/litestream -> ../lib/node_modules/@flydotio/litestream/index.js) and the real binary sits in
 * the platform package, nested under the wrapper's package (npm 7+, 11 included) or beside it
 * (hoisted, older npm).
 */
function root(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-litestream-bin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function file(path: string, body = '#!/bin/sh\nexit 0\n', mode = 0o755): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
  chmodSync(path, mode);
  return path;
}

/** An npm global prefix with the wrapper package; `layout` says where its platform binary went. */
function npmGlobal(prefix: string, layout: 'nested' | 'hoisted' | 'missing'): { bin: string; binary: string } {
  const pkg = join(prefix, 'lib', 'node_modules', '@flydotio', 'litestream');
  file(join(pkg, 'index.js'), '#!/usr/bin/env node\n');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync('../lib/node_modules/@flydotio/litestream/index.js', join(prefix, 'bin', 'litestream'));
  const binary =
    layout === 'nested'
      ? join(pkg, 'node_modules', '@flydotio', 'litestream-linux-x64', 'litestream')
      : join(prefix, 'lib', 'node_modules', '@flydotio', 'litestream-linux-x64', 'litestream');
  if (layout !== 'missing') file(binary);
  return { bin: join(prefix, 'bin'), binary };
}

function search(dir: string, more: LitestreamSearch = {}): LitestreamSearch {
  return {
    execPath: join(dir, 'app', 'isocast'),
    pathEnv: join(dir, 'empty-bin'),
    env: {},
    cwd: join(dir, 'checkout'),
    platform: 'linux',
    arch: 'x64',
    ...more,
  };
}

test('npm 11: the wrapper on PATH leads to the binary nested under its package', (t) => {
  const dir = root(t);
  const g = npmGlobal(join(dir, 'prefix'), 'nested');
  assert.deepEqual(findLitestream(search(dir, { pathEnv: `/nonexistent:${g.bin}` })), { path: g.binary });
});

test('older npm: the wrapper on PATH leads to the hoisted binary beside its package', (t) => {
  const dir = root(t);
  const g = npmGlobal(join(dir, 'prefix'), 'hoisted');
  assert.deepEqual(findLitestream(search(dir, { pathEnv: g.bin })), { path: g.binary });
});

test('the global bin off PATH: found from npm_config_prefix, or from the executable prefix', (t) => {
  const dir = root(t);
  for (const layout of ['nested', 'hoisted'] as const) {
    const prefix = join(dir, `npm-${layout}`);
    const g = npmGlobal(prefix, layout);
    assert.deepEqual(findLitestream(search(dir, { env: { npm_config_prefix: prefix } })), { path: g.binary });
    assert.deepEqual(findLitestream(search(dir, { env: { NPM_CONFIG_PREFIX: prefix } })), { path: g.binary });
    assert.deepEqual(findLitestream(search(dir, { env: { npm_config_global_prefix: prefix } })), {
      path: g.binary,
    });
    // /usr/local/bin/isocast and npm's default prefix /usr/local (/usr/local/lib/node_modules).
    assert.deepEqual(findLitestream(search(dir, { execPath: join(prefix, 'bin', 'isocast') })), { path: g.binary });
  }
});

test('never the wrapper itself: a wrapper without its platform package is not an answer', (t) => {
  const dir = root(t);
  const g = npmGlobal(join(dir, 'prefix'), 'missing');
  const r = findLitestream(search(dir, { pathEnv: g.bin }));
  assert.ok('problem' in r);
  assert.match(r.problem, /no litestream executable was found .*npm install -g @flydotio\/litestream/);
  // A checkout's node_modules/.bin/litestream is the same wrapper, linked from elsewhere.
  const local = join(dir, 'checkout', 'node_modules');
  file(join(local, '@flydotio', 'litestream', 'index.js'), '#!/usr/bin/env node\n');
  file(join(local, '@flydotio', 'litestream', 'node_modules', '@flydotio', 'litestream-linux-x64', 'litestream'));
  mkdirSync(join(local, '.bin'));
  symlinkSync('../@flydotio/litestream/index.js', join(local, '.bin', 'litestream'));
  assert.deepEqual(findLitestream(search(dir, { pathEnv: join(local, '.bin') })), {
    path: join(local, '@flydotio', 'litestream', 'node_modules', '@flydotio', 'litestream-linux-x64', 'litestream'),
  });
});

test('order: LITESTREAM_BIN, next to the executable, PATH, npm global, the checkout', (t) => {
  const dir = root(t);
  const g = npmGlobal(join(dir, 'prefix'), 'nested');
  const onPath = file(join(dir, 'usr-bin', 'litestream'));
  const beside = file(join(dir, 'app', 'litestream'));
  const checkout = file(join(dir, 'checkout', 'node_modules', '@flydotio', 'litestream-linux-x64', 'litestream'));
  const everything = { pathEnv: `${join(dir, 'usr-bin')}:${g.bin}` };
  const configured = file(join(dir, 'opt', 'litestream'));
  assert.deepEqual(findLitestream(search(dir, { ...everything, configured })), { path: configured });
  assert.deepEqual(findLitestream(search(dir, everything)), { path: beside });
  rmSync(beside);
  assert.deepEqual(findLitestream(search(dir, everything)), { path: onPath });
  rmSync(onPath);
  assert.deepEqual(findLitestream(search(dir, everything)), { path: g.binary });
  rmSync(join(dir, 'prefix'), { recursive: true });
  assert.deepEqual(findLitestream(search(dir, everything)), { path: checkout });
  // Not executable, or a directory of that name: skipped.
  chmodSync(checkout, 0o644);
  mkdirSync(join(dir, 'usr-bin', 'litestream'));
  assert.ok('problem' in findLitestream(search(dir, everything)));
  const r = findLitestream(search(dir, { configured: join(dir, 'nope') }));
  assert.ok('problem' in r && /LITESTREAM_BIN=.*nope is not an executable file/.test(r.problem));
});

test('the real Litestream, laid out as npm 11 installs it globally, is found and runs', (t) => {
  const dir = root(t);
  const g = npmGlobal(join(dir, 'prefix'), 'missing');
  const nested = join(dir, 'prefix', 'lib', 'node_modules', '@flydotio', 'litestream', 'node_modules', '@flydotio');
  mkdirSync(join(nested, 'litestream-linux-x64'), { recursive: true });
  symlinkSync(LITESTREAM, join(nested, 'litestream-linux-x64', 'litestream'));
  const r = findLitestream(search(dir, { pathEnv: g.bin }));
  assert.ok('path' in r, JSON.stringify(r));
  assert.match(execFileSync(r.path, ['version'], { encoding: 'utf8' }), /^v0\.3\.\d+/);
});
