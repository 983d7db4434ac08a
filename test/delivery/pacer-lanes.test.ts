import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BOT_API_LIMITS, createPacer } from '../../src/delivery/pacer.ts';

test('test messages never move a paid slot: paid schedules are identical with and without a flood of them', () => {
  const quiet = createPacer(BOT_API_LIMITS);
  const flooded = createPacer(BOT_API_LIMITS);
  const paidQuiet: number[] = [];
  const paidFlooded: number[] = [];
  // 200 paid pushes to 200 chats reserved over 2 s; between each, 5 registration test messages
  // (one to a chat a push goes to), as a flood of registrations would ask for.
  for (let i = 0; i < 200; i++) {
    const now = i * 10;
    for (let k = 0; k < 5; k++) flooded.reserve(k === 0 ? `chat${i + 1}` : `flood${i}-${k}`, now, 'test');
    paidQuiet.push(quiet.reserve(`chat${i}`, now));
    paidFlooded.push(flooded.reserve(`chat${i}`, now));
  }
  assert.deepEqual(paidFlooded, paidQuiet, 'paid pushes delayed: 0');
});

test('the test lane has its own small rate and waits for a chat slot a paid push booked', () => {
  const p = createPacer(BOT_API_LIMITS);
  const slots = Array.from({ length: 6 }, (_, i) => p.reserve(`c${i}`, 0, 'test'));
  assert.deepEqual(slots, [0, 500, 1000, 1500, 2000, 2500], '2 per second');
  const paid = p.reserve('shared', 10_000);
  assert.equal(paid, 10_000);
  assert.equal(
    p.reserve('shared', 10_000, 'test'),
    10_000 + BOT_API_LIMITS.chatIntervalMs,
    'after the push, not before',
  );
  // A platform 429 pause holds both lanes.
  p.pauseUntil(20_000);
  assert.equal(p.readyAt('x', 15_000), 20_000);
  assert.equal(p.readyAt('y', 15_000, 'test'), 20_000);
});
