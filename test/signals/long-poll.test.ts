import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { crossings } from '../helpers/crossings.ts';
import { buy, over } from '../payments/buy.ts';
import { walletShare } from '../../src/paywall/held-read.ts';
import { ERRORS } from '../../src/lib/api-errors.ts';

const TOO_MANY_WAITING = ERRORS.too_many_waiting.message;

/** Issue 25.4: `GET /v1/signals?...&wait=N` holds a bearer read until an entitled signal commits. */
async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  const base = await listen(t, e.app.fetch);
  const f = over(base);
  const nyc = e.deps.catalog.get('nyc')!;
  const feed = crossings(e.stores.signals, nyc, e.clock.now());
  feed.next(); // latest 1
  const bought = await buy(f, privateKeyToAccount(generatePrivateKey()), 'nyc', 3, e.clock.now());
  assert.equal(bought.status, 200);
  assert.equal(bought.body.paidThroughSeq, 4);
  const auth = { authorization: `Bearer ${bought.body.receiptToken}` };
  const read = async (query: string) => {
    const started = performance.now();
    const res = await f(`/v1/signals?city=nyc&${query}`, { headers: auth });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, any>,
      ms: performance.now() - started,
      res,
    };
  };
  return { ...e, base, f, feed, read, auth, notifier: e.stores.notifier };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond());
};

test('a held read answers when the signal commits, with the page it would answer without wait', async (t) => {
  const { read, feed, notifier } = await setup(t);
  const held = read('since=1&wait=20');
  await until(() => notifier.waiting() === 1);
  const committedAt = performance.now();
  const s = feed.next(); // seq 2
  const r = await held;
  const receivedAt = performance.now();
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.signals.map((x: { seq: number }) => x.seq),
    [2],
  );
  assert.equal(s.seq, 2);
  assert.deepEqual([r.body.next_cursor, r.body.paid_through, r.body.latest, r.body.more], [2, 4, 2, false]);
  assert.equal(notifier.waiting(), 0);
  t.diagnostic(`commit -> answer ${(receivedAt - committedAt).toFixed(1)} ms`);
  // Same bytes as a plain read of the same state.
  const plain = await read('since=1');
  assert.deepEqual(plain.body, r.body);
});

test('no signal within wait: the normal empty page after N seconds; wait=0 and absent answer at once', async (t) => {
  const { read, notifier } = await setup(t);
  const r = await read('since=1&wait=1');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.signals, []);
  assert.ok(r.ms >= 950, `answered after ${r.ms.toFixed(0)} ms`);
  assert.equal(notifier.waiting(), 0);
  for (const q of ['since=1&wait=0', 'since=1']) {
    const quick = await read(q);
    assert.equal(quick.status, 200);
    assert.ok(quick.ms < 900, `${q}: ${quick.ms.toFixed(0)} ms`);
  }
});

test('a read with something to return, or an exhausted bundle, answers at once; exhaustion is unchanged', async (t) => {
  const { read, feed, notifier } = await setup(t);
  const ready = await read('since=0&wait=25');
  assert.equal(ready.status, 200);
  assert.deepEqual(
    ready.body.signals.map((x: { seq: number }) => x.seq),
    [1],
  );
  assert.ok(ready.ms < 2_000);
  for (let i = 0; i < 4; i++) feed.next(); // latest 5, ceiling 4
  const exhausted = await read('since=4&wait=25');
  assert.equal(exhausted.status, 402);
  assert.equal(exhausted.body.error, 'paid signals exhausted; buy more to continue');
  assert.deepEqual([exhausted.body.paid_through, exhausted.body.latest], [4, 5]);
  assert.ok(exhausted.ms < 2_000);
  assert.equal(notifier.waiting(), 0);
});

test('a signal for another city, or at or below since, does not wake the read', async (t) => {
  const { read, feed, notifier, stores, deps, clock } = await setup(t);
  const london = crossings(stores.signals, deps.catalog.get('london')!, clock.now());
  const held = read('since=2&wait=20');
  await until(() => notifier.waiting() === 1);
  london.next();
  notifier.committed('nyc', 2); // a seq not past since (as a repeated notice would be)
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(notifier.waiting(), 1, 'still held');
  feed.next(); // seq 2: not past since=2
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(notifier.waiting(), 1, 'seq 2 is not past since 2');
  feed.next(); // seq 3
  const r = await held;
  assert.deepEqual(
    r.body.signals.map((x: { seq: number }) => x.seq),
    [3],
  );
});

test('a client that disconnects frees its waiter at once', async (t) => {
  const { base, auth, notifier } = await setup(t);
  const { port } = new URL(base);
  const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/signals?city=nyc&since=1&wait=25', headers: auth });
  req.on('error', () => {});
  req.end();
  await until(() => notifier.waiting() === 1);
  req.destroy();
  await until(() => notifier.waiting() === 0);
});

test('wait must be an integer from 0 to 25: anything else is a 400 with the disclaimer', async (t) => {
  const { read } = await setup(t);
  for (const bad of ['26', '-1', '1.5', 'abc', '', '100', ' 5', '1e1']) {
    const r = await read(`since=1&wait=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error, 'wait must be an integer from 0 to 25 (seconds)', bad);
    assert.match(r.body.disclaimer, /not financial/);
  }
});

test('past MAX_SIGNAL_WAITERS a wait read answers 503 with Retry-After; shutdown releases the held ones', async (t) => {
  const { read, notifier } = await setup(t, { MAX_SIGNAL_WAITERS: '2' });
  const held = [read('since=1&wait=20'), read('since=1&wait=20')];
  await until(() => notifier.waiting() === 2);
  const over = await read('since=1&wait=20');
  assert.equal(over.status, 503);
  assert.equal(over.body.error, TOO_MANY_WAITING);
  assert.equal(over.res.headers.get('retry-after'), '2');
  const started = performance.now();
  notifier.releaseAll();
  for (const r of await Promise.all(held)) assert.deepEqual([r.status, r.body.signals], [200, []]);
  assert.ok(performance.now() - started < 1_000);
  assert.equal((await read('since=1&wait=20')).status, 200, 'after release, wait answers at once');
});

test('one wallet holds at most its share of MAX_SIGNAL_WAITERS; a paying buyer of another wallet still gets a slot', async (t) => {
  // Issue 35 item 4: a pool of 60 gives each wallet 4 (walletShare: 5 %, at least 4).
  const { read, notifier, f, clock } = await setup(t, { MAX_SIGNAL_WAITERS: '60' });
  assert.equal(walletShare(60), 4);
  assert.equal(walletShare(10_000), 500);
  const cheap = Array.from({ length: 4 }, () => read('since=1&wait=20'));
  await until(() => notifier.waiting() === 4);
  const past = await read('since=1&wait=20');
  assert.deepEqual([past.status, past.body.error], [503, TOO_MANY_WAITING]);
  assert.equal(past.res.headers.get('retry-after'), '2');
  assert.equal(notifier.waiting(), 4, 'the extra wait was not held');
  // Another wallet that pays now is held as usual.
  const payer = await buy(f, privateKeyToAccount(generatePrivateKey()), 'nyc', 3, clock.now());
  assert.equal(payer.status, 200);
  const theirs = f(`/v1/signals?city=nyc&since=1&wait=20`, {
    headers: { authorization: `Bearer ${payer.body.receiptToken}` },
  });
  await until(() => notifier.waiting() === 5);
  notifier.releaseAll();
  assert.equal((await theirs).status, 200);
  for (const r of await Promise.all(cheap)) assert.equal(r.status, 200);
  // Released: the wallet's share is free again.
  assert.equal(notifier.waiting(), 0);
  assert.equal((await read('since=1&wait=20')).status, 200, 'not 503: the share was given back');
});

test('wait is in the OpenAPI document as a query parameter of GET /v1/signals', async (t) => {
  const { base } = await setup(t);
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as any;
  const params = doc.paths['/v1/signals'].get.parameters as { name: string; in: string; description?: string }[];
  const wait = params.find((p) => p.name === 'wait');
  assert.equal(wait?.in, 'query');
  assert.match(wait?.description ?? '', /0\.\.25/);
});
