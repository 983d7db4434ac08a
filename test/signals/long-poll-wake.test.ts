import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { crossings } from '../helpers/crossings.ts';
import { buy, over } from '../payments/buy.ts';
import { ERRORS } from '../../src/lib/api-errors.ts';

const RECEIPT_EXPIRED = ERRORS.receipt_expired.message;
import { receiptTypedData } from '../../packages/isocast-client/src/receipt-typed-data.ts';

/**
 * Issue 25.4, what a commit wakes: every held read of the city is answered from one lookup per
 * token and wallet (paywall/held-read.ts), and still exactly as a fresh read of its own wallet
 * would be at that moment: its own ceiling, its token revoked or expired while it was held.
 */
const ORIGIN = 'http://127.0.0.1:8402'; // testApp's BASE_URL
const DAY_MS = 86_400_000;

async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  const base = await listen(t, e.app.fetch);
  const f = over(base);
  const feed = crossings(e.stores.signals, e.deps.catalog.get('nyc')!, e.clock.now());
  feed.next(); // latest 1
  const buyer = async (count: number) => {
    const account = privateKeyToAccount(generatePrivateKey());
    const bought = await buy(f, account, 'nyc', count, e.clock.now());
    assert.equal(bought.status, 200);
    const token = bought.body.receiptToken as string;
    const read = async (query: string) => {
      const res = await f(`/v1/signals?city=nyc&${query}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    return { account, paidThrough: bought.body.paidThroughSeq as number, read };
  };
  return { ...e, f, feed, buyer, notifier: e.stores.notifier };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond());
};
const seqs = (body: Record<string, any>) => body.signals.map((s: { seq: number }) => s.seq);

test('one commit: held reads of different wallets get their own paid_through; reads of one wallet get the same page', async (t) => {
  const { feed, buyer, notifier } = await setup(t);
  const small = await buyer(3); // ceiling 4
  const large = await buyer(6); // ceiling 7
  assert.deepEqual([small.paidThrough, large.paidThrough], [4, 7]);
  const held = [small.read('since=1&wait=20'), small.read('since=1&wait=20'), large.read('since=1&wait=20')];
  await until(() => notifier.waiting() === 3);
  feed.next(); // seq 2 wakes all three at once
  const [a, b, c] = await Promise.all(held);
  for (const r of [a!, b!, c!])
    assert.deepEqual([r.status, seqs(r.body), r.body.latest, r.body.more], [200, [2], 2, false]);
  assert.deepEqual([a!.body.paid_through, b!.body.paid_through, c!.body.paid_through], [4, 4, 7]);
  assert.deepEqual(a!.body, b!.body);
  // Held again past the small bundle's last paid seq: its reads are exhausted at once, the other's held.
  feed.next();
  feed.next(); // latest 4
  const exhausted = await small.read('since=4&wait=20');
  assert.deepEqual([exhausted.status, exhausted.body.paid_through, exhausted.body.latest], [402, 4, 4]);
  const stillHeld = large.read('since=4&wait=20');
  await until(() => notifier.waiting() === 1);
  feed.next(); // seq 5
  const r = await stillHeld;
  assert.deepEqual([r.status, seqs(r.body), r.body.paid_through, r.body.next_cursor], [200, [5], 7, 5]);
});

test('a purchase between two wakes is seen by the next wake: the ceiling is not remembered across commits', async (t) => {
  const { f, feed, buyer, notifier, clock } = await setup(t);
  const one = await buyer(2); // ceiling 3
  let held = one.read('since=1&wait=20');
  await until(() => notifier.waiting() === 1);
  feed.next(); // seq 2
  assert.equal((await held).body.paid_through, 3);
  assert.equal((await buy(f, one.account, 'nyc', 4, clock.now())).body.paidThroughSeq, 7);
  held = one.read('since=2&wait=20');
  await until(() => notifier.waiting() === 1);
  feed.next(); // seq 3
  const r = await held;
  assert.deepEqual([seqs(r.body), r.body.paid_through], [[3], 7]);
});

test('a token revoked while its read is held answers as revoked when the signal commits, not with the page', async (t) => {
  const { f, feed, buyer, notifier, clock } = await setup(t);
  const kept = await buyer(3);
  const gone = await buyer(3);
  const held = [gone.read('since=1&wait=20'), kept.read('since=1&wait=20')];
  await until(() => notifier.waiting() === 2);
  const timestamp = Math.floor(clock.now() / 1000);
  const signature = await gone.account.signTypedData(
    receiptTypedData('ReceiptRevocation', { wallet: gone.account.address, origin: ORIGIN, timestamp }),
  );
  const revoked = await f('/v1/receipts/revoke', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: gone.account.address, origin: ORIGIN, timestamp, signature }),
  });
  assert.equal(revoked.status, 200);
  assert.equal(notifier.waiting(), 2, 'revocation does not answer the read by itself');
  feed.next(); // seq 2
  const [r, k] = await Promise.all(held);
  assert.equal(r!.status, 402);
  assert.equal(r!.body.error, 'receipt token not recognised; pay to continue');
  assert.equal(r!.body.signals, undefined);
  assert.deepEqual([k!.status, seqs(k!.body)], [200, [2]]);
});

test('a token that expires while its read is held answers 401 at wake', async (t) => {
  const { feed, buyer, notifier, clock } = await setup(t, { RECEIPT_TTL_DAYS: '1' });
  const one = await buyer(3);
  const held = one.read('since=1&wait=20');
  await until(() => notifier.waiting() === 1);
  clock.advance(DAY_MS);
  feed.next();
  const r = await held;
  assert.deepEqual([r.status, r.body.error], [401, RECEIPT_EXPIRED]);
});
