import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, defaultLogFormat } from '../../src/lib/logger.ts';
import { tempDir } from '../helpers/app.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/** LOG_FORMAT=json|pretty (issue 27.9): a readable line per event at a terminal, secrets masked in both. */
test('pretty: one readable line per event, secrets redacted as in JSON', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'pretty', write: (l) => lines.push(l), base: { service: 'isocast' } });
  log.warn('poll failed', {
    city: 'nyc',
    error: 'upstream said Bearer abc.def',
    authorization: 'Bearer secret-value',
    n: 3,
  });
  log.child({ component: 'poller' }).info('signal', { seq: 2, to: '44-45°F' });
  log.error('x');
  assert.equal(lines.length, 3);
  assert.match(
    lines[0]!,
    /^\d\d:\d\d:\d\d WARN {2}poll failed {2}city=nyc error="upstream said \[redacted\]" authorization=\[redacted\] n=3$/,
  );
  assert.match(lines[1]!, /^\d\d:\d\d:\d\d INFO {2}signal {2}component=poller seq=2 to=44-45°F$/);
  assert.ok(!lines.join('\n').includes('secret-value') && !lines.join('\n').includes('abc.def'));
  assert.ok(!lines[0]!.includes('service='), 'the constant service field is left out');
  assert.match(lines[2]!, /^\d\d:\d\d:\d\d ERROR x$/);
});

test('the default follows the terminal: pretty on a TTY, JSON for systemd and pipes', () => {
  assert.equal(defaultLogFormat(true), 'pretty');
  assert.equal(defaultLogFormat(false), 'json');
});

/** Starts `serve` (through `file`: node itself, or a pty) and answers its first "listening" log line. */
async function firstListeningLine(
  t: TestContext,
  command: { file: string; args: string[] },
  env: Record<string, string> = {},
): Promise<string> {
  const child = spawn(command.file, command.args, {
    env: {
      PATH: process.env.PATH ?? '',
      ...compileCacheEnv(),
      PORT: '0',
      DATA_DIR: join(tempDir(t), 'data'),
      POLL_INTERVAL_MS: '3600000',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      // A pty also carries stderr, whose start line says "isocast listening on ...".
      const l = out.split(/\r?\n/).find((x) => x.includes('listening') && !x.includes('isocast listening'));
      if (l) resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out.slice(-500)}`)));
  });
  child.kill('SIGTERM');
  return line;
}

const SERVE = { file: process.execPath, args: ['src/main.ts', 'serve'] };

test('serve honours LOG_FORMAT=pretty (and stays JSON on a pipe without it)', async (t) => {
  for (const format of ['pretty', undefined] as const) {
    const first = await firstListeningLine(t, SERVE, format ? { LOG_FORMAT: format } : {});
    if (format === 'pretty')
      assert.match(first, /^\d\d:\d\d:\d\d INFO {2}listening {2}host=127\.0\.0\.1 port=\d+ mode=mock/);
    else assert.equal(JSON.parse(first).msg, 'listening');
  }
});

/**
 * The default at a real terminal (a pty from util-linux `script`): pretty. A start decides that
 * without node:tty when stdout is a pipe, file, socket or /dev/null (src/preflight.ts).
 */
test('serve at a terminal logs pretty lines by default', async (t) => {
  const script = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));
  if (!script) return t.skip('util-linux script is not installed');
  const command = `${JSON.stringify(process.execPath)} ${SERVE.args.join(' ')}`;
  const line = await firstListeningLine(t, { file: script, args: ['-qfec', command, '/dev/null'] });
  assert.match(line, /\d\d:\d\d:\d\d INFO {2}listening {2}host=127\.0\.0\.1 port=\d+ mode=mock/);
});
