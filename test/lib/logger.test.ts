import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { memoryLogger } from '../helpers/logger.ts';

test('secrets are redacted by key at any depth and by shape in free text', () => {
  const log = memoryLogger();
  log.info('request', {
    headers: {
      'X-Payment': 'eyJzZWNyZXQiOnRydWV9',
      Authorization: 'Bearer isr_abcdefghijklmnopqrstuvwxyz',
      accept: 'json',
    },
    settlerPrivateKey: '0x' + '11'.repeat(32),
    nested: { deeper: { botToken: '123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ' } },
  });
  log.warn('send failed for https://api.example/bot123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ/sendMessage with Bearer abc.def');
  const all = log.lines.join('\n');
  for (const secret of [
    'eyJzZWNyZXQiOnRydWV9',
    'isr_abcdefghijklmnopqrstuvwxyz',
    '11'.repeat(32),
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    'abc.def',
  ]) {
    assert.ok(!all.includes(secret), `leaked ${secret}`);
  }
  const first = JSON.parse(log.lines[0]!);
  assert.equal(first.headers.accept, 'json');
  assert.equal(first.level, 'info');
  assert.equal(first.msg, 'request');
});

test('levels below the minimum are dropped', () => {
  const log = memoryLogger('warn');
  log.info('quiet');
  log.error('loud', { err: new Error('boom') });
  assert.equal(log.lines.length, 1);
  const err = JSON.parse(log.lines[0]!).err;
  assert.deepEqual({ name: err.name, message: err.message }, { name: 'Error', message: 'boom' });
  assert.match(err.stack, /^Error: boom\n\s+at /, 'errors are traceable: the stack is logged');
});

test('error logs carry the cause chain, redacted like everything else', () => {
  const log = memoryLogger();
  const root = new Error('connect ECONNREFUSED; Bearer isr_AAAAAAAAAAAAAAAAAAAA');
  log.error('failed', { err: new Error('settle failed', { cause: root }) });
  const err = JSON.parse(log.lines[0]!).err;
  assert.equal(err.cause.message, 'connect ECONNREFUSED; [redacted]');
  assert.ok(!log.lines[0]!.includes('isr_AAAA'));
  assert.ok(err.cause.stack.startsWith('Error: connect ECONNREFUSED; [redacted]'));
});

test('stdout lines of a moment go out in one write, in order; a warning, process.exit and a crash lose none', () => {
  const logger = JSON.stringify(new URL('../../src/lib/logger.ts', import.meta.url).pathname);
  const script = (tail: string) => `
    import { createLogger } from ${logger};
    const writes = [];
    const real = process.stdout.write.bind(process.stdout);
    process.stdout.write = (chunk, ...rest) => { writes.push(String(chunk)); return real(chunk, ...rest); };
    const log = createLogger({ base: { service: 't' } });
    log.info('one');
    log.info('two');
    // After the logger's own exit hook, so its last write is counted.
    process.on('exit', () => process.stderr.write(JSON.stringify(writes.length)));
    ${tail}`;
  const run = (tail: string) => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script(tail)], { encoding: 'utf8' });
    return {
      msgs: r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).msg),
      writes: Number(r.stderr.split('\n')[0]),
    };
  };
  assert.deepEqual(run(`setImmediate(() => log.info('three'));`), { msgs: ['one', 'two', 'three'], writes: 1 });
  assert.deepEqual(run(`setTimeout(() => log.info('three'), 200);`), { msgs: ['one', 'two', 'three'], writes: 2 });
  assert.deepEqual(run(`log.warn('now'); log.info('after');`).msgs, ['one', 'two', 'now', 'after']);
  assert.deepEqual(run(`process.exit(3);`).msgs, ['one', 'two']);
  const crash = spawnSync(process.execPath, ['--input-type=module', '-e', script(`throw new Error('boom');`)], {
    encoding: 'utf8',
  });
  assert.deepEqual(
    crash.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).msg),
    ['one', 'two'],
  );
});
