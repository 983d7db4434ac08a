import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * `npm test` runs the suite through scripts/test.ts, which fails when the suite changed a tracked
 * file (issue 38 item 4). Here it runs as `npm test` would, on a small git checkout of its own
 * whose one test file does one thing to the tree.
 */
const WRAPPER = resolve('scripts/test.ts');

/** Git and Node see only the temp checkout: no outer repository, no outer test runner. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_CEILING_DIRECTORIES: tmpdir() };
  for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'NODE_TEST_CONTEXT']) delete env[k];
  return env;
}

function sh(cwd: string, cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
}

/** A checkout with two committed files, an ignored folder, and `body` as its only test. */
function checkout(t: { after(fn: () => void): void }, body: string, opts: { git: boolean } = { git: true }): string {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-clean-checkout-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'test'));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(dir, 'tracked.txt'), 'as committed\n');
  writeFileSync(join(dir, 'notes.txt'), 'as committed\n');
  writeFileSync(join(dir, '.gitignore'), 'test-artifacts/\n');
  writeFileSync(
    join(dir, 'test', 'one.test.ts'),
    `import { test } from 'node:test';\nimport * as fs from 'node:fs';\ntest('one', () => {\n${body}\n});\n`,
  );
  if (opts.git) {
    sh(dir, 'git', ['init', '-q']);
    sh(dir, 'git', ['add', '.']);
    sh(dir, 'git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'start']);
  }
  return dir;
}

function npmTest(cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [WRAPPER], { cwd, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('a suite that rewrites a tracked file fails, and the file is named', (t) => {
  const dir = checkout(t, "fs.writeFileSync('tracked.txt', 'rewritten by a test\\n');");
  const r = npmTest(dir);
  assert.match(r.stdout, /pass 1/, 'the test itself passed');
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /1 tracked file\(s\) changed while the suite ran/);
  assert.match(r.stderr, /^ {2}tracked\.txt$/m);
  assert.doesNotMatch(r.stderr, /notes\.txt/);
});

test('a suite that deletes a tracked file fails, and the file is named', (t) => {
  const r = npmTest(checkout(t, "fs.rmSync('notes.txt');"));
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /^ {2}notes\.txt$/m);
});

test('a suite that writes only to ignored and untracked paths passes', (t) => {
  const dir = checkout(
    t,
    "fs.mkdirSync('test-artifacts', { recursive: true }); fs.writeFileSync('test-artifacts/shot.png', 'x'); fs.writeFileSync('new.txt', 'x');",
  );
  const r = npmTest(dir);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stderr, /changed while the suite ran/);
});

test('uncommitted edits pass when the suite leaves them alone, and fail when it changes them', (t) => {
  const dir = checkout(t, "fs.writeFileSync('tracked.txt', 'the developer edit\\n');");
  writeFileSync(join(dir, 'tracked.txt'), 'the developer edit\n');
  writeFileSync(join(dir, 'notes.txt'), 'another edit\n');
  const same = npmTest(dir);
  assert.equal(same.code, 0, `the test wrote what was already there: ${same.stderr}`);

  writeFileSync(join(dir, 'tracked.txt'), 'a different edit\n');
  const moved = npmTest(dir);
  assert.notEqual(moved.code, 0);
  assert.match(moved.stderr, /^ {2}tracked\.txt$/m);
  assert.doesNotMatch(moved.stderr, /notes\.txt/);
});

test("a failing suite keeps node --test's exit code", (t) => {
  const r = npmTest(checkout(t, "throw new Error('red');"));
  assert.equal(r.code, 1);
  assert.match(r.stdout, /fail 1/);
  assert.doesNotMatch(r.stderr, /changed while the suite ran/);
});

test('outside a git checkout the check is skipped with the reason and the suite still runs', (t) => {
  const r = npmTest(checkout(t, "fs.writeFileSync('tracked.txt', 'x');", { git: false }));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /clean-checkout check skipped: not a git checkout/);
  assert.match(r.stdout, /pass 1/);
});
