import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSignalNotifier } from '../../src/signals/notifier.ts';

/** The long-poll notifier (issue 25.4): waiters per city, one shared timer for every timeout. */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('waits of different lengths each time out on their own deadline, from one timer', async () => {
  const n = createSignalNotifier();
  const base = timers();
  const started = performance.now();
  const ends: [string, number][] = [];
  const track = (name: string, p: Promise<string>) =>
    p.then((reason) => {
      assert.equal(reason, 'timeout');
      ends.push([name, performance.now() - started]);
    });
  const all = [
    track('long', n.wait('nyc', 0, { ms: 120 })),
    track('short', n.wait('nyc', 0, { ms: 30 })),
    track('mid', n.wait('miami', 0, { ms: 60 })),
  ];
  assert.equal(timers() - base, 1, 'one timer for three waits');
  await Promise.all(all);
  assert.deepEqual(
    ends.map(([name]) => name),
    ['short', 'mid', 'long'],
  );
  for (const [name, at] of ends) {
    const want = name === 'short' ? 30 : name === 'mid' ? 60 : 120;
    assert.ok(at >= want - 2, `${name} ended at ${at.toFixed(1)} ms, before ${want}`);
  }
  assert.equal(n.waiting(), 0);
  assert.equal(timers(), base, 'no timer left once nothing is held');
});

test('a commit wakes only its city past since; the rest still time out; nothing held leaves no timer', async () => {
  const n = createSignalNotifier();
  const base = timers();
  const woken = n.wait('nyc', 1, { ms: 10_000 });
  const atSeq = n.wait('nyc', 2, { ms: 10_000 });
  const other = n.wait('miami', 0, { ms: 40 });
  assert.equal(n.wakes(), 0);
  n.committed('nyc', 2);
  assert.equal(n.wakes(), 1);
  assert.equal(await woken, 'signal');
  assert.equal(n.waiting(), 2);
  assert.equal(await other, 'timeout');
  n.committed('nyc', 3);
  assert.equal(await atSeq, 'signal');
  assert.equal(timers(), base, 'the 10 s deadlines left no timer behind');
  n.committed('nyc', 4); // nobody held: not a wake
  assert.equal(n.wakes(), 2);
  // A wait after everything was cleared arms the timer again.
  assert.equal(await n.wait('nyc', 9, { ms: 20 }), 'timeout');
});

test('an aborted wait is freed at once; releaseAll answers the rest and every later wait', async () => {
  const n = createSignalNotifier();
  const abort = new AbortController();
  const gone = n.wait('nyc', 0, { ms: 10_000, abort: abort.signal });
  const kept = n.wait('nyc', 0, { ms: 10_000 });
  abort.abort();
  assert.equal(await gone, 'aborted');
  assert.equal(n.waiting(), 1);
  n.releaseAll();
  assert.equal(await kept, 'stopped');
  assert.equal(await n.wait('nyc', 0, { ms: 10_000 }), 'stopped');
  assert.equal(n.waiting(), 0);
});
