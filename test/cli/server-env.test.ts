import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { listen, tempDir, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { ROOT } from '../helpers/client-package.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * The buyer commands read ISOCAST_SERVER (issue 37 item 4): the README's snippets set it, so
 * `isocast cities` after them goes to that server; --server still wins; a bad value is named as
 * the variable it came from. Run as the real process (main.ts reads the environment).
 */
const NODE = join(ROOT, 'node_modules', '.bin', 'node');

function cli(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      NODE,
      ['src/main.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...compileCacheEnv(), ...env } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('ISOCAST_SERVER picks the server; --server wins over it; a bad value names the variable', async (t) => {
  const app = testApp(t);
  insertSignals(app.db, 'nyc', 3);
  const server = await listen(t, app.app.fetch);
  const home = tempDir(t, 'isocast-server-env-');
  const env = { HOME: home, XDG_STATE_HOME: join(home, 'state') };
  // A port nothing listens on: reaching it would fail the command.
  const dead = 'http://127.0.0.1:9';

  const fromEnv = await cli(['cities', '--json'], { ...env, ISOCAST_SERVER: server });
  assert.equal(fromEnv.code, 0, fromEnv.stderr);
  assert.ok(fromEnv.stdout.split('\n').some((l) => l.includes('"slug":"nyc"') && l.includes('"latestSeq":3')));

  const flagWins = await cli(['cities', '--json', '--server', server], { ...env, ISOCAST_SERVER: dead });
  assert.equal(flagWins.code, 0, flagWins.stderr);

  const unreachable = await cli(['cities'], { ...env, ISOCAST_SERVER: dead });
  assert.equal(unreachable.code, 1);
  assert.match(unreachable.stderr, /cannot reach http:\/\/127\.0\.0\.1:9 .*--server <url> or ISOCAST_SERVER/);

  const bad = await cli(['cities'], { ...env, ISOCAST_SERVER: 'localhost:8402' });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /ISOCAST_SERVER must be an absolute http\(s\) URL, got localhost:8402; did you mean http:\/\/localhost:8402\?/,
  );
});
