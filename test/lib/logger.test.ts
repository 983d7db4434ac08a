import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryLogger } from '../../src/lib/logger.ts';

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
