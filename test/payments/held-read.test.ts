import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listen, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { buy, buyerA, over } from './buy.ts';
import { createWakeLookups } from '../../src/paywall/held-read.ts';

/** The lookups shared by the reads one commit wakes (issue 25.4): remembered for one wake, and only until a write. */
test('wake lookups answer from memory within one wake, and ask again after a write or the next wake', async (t) => {
  const e = testApp(t);
  insertSignals(e.db, 'nyc', 1);
  const f = over(await listen(t, e.app.fetch));
  const token = (await buy(f, buyerA, 'nyc', 3, e.clock.now())).body.receiptToken as string;
  const notifier = e.stores.notifier;
  const shared = createWakeLookups(e.db, notifier, e.stores);
  const wallet = buyerA.address.toLowerCase();

  const first = shared();
  assert.equal(first.receipt(token)?.wallet, wallet);
  assert.equal(first.paidThrough(wallet, 'nyc'), 4);
  assert.equal(first.paidThrough(wallet, 'miami'), 0);
  // Same wake, nothing written: the remembered answers (the same object, no query).
  assert.equal(shared().receipt(token), first.receipt(token));

  // A write on the connection (here a revocation) makes the next read look again.
  assert.ok(e.stores.receipts.revokeAll(buyerA.address) > 0);
  assert.equal(shared().receipt(token), null);

  // A purchase is a write too, and a new wake starts empty even without one.
  await buy(f, buyerA, 'nyc', 2, e.clock.now());
  assert.equal(shared().paidThrough(wallet, 'nyc'), 6);
  const held = notifier.wait('nyc', 0, { ms: 10_000 });
  notifier.committed('nyc', 2);
  await held;
  assert.equal(shared().paidThrough(wallet, 'nyc'), 6);
});
