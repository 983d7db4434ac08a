import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { nextCeiling } from '../../src/entitlements/store.ts';
import { tempDir } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { createStores } from '../../src/stores.ts';

function db(t: Parameters<typeof tempDir>[0]) {
  const d = openDb(join(tempDir(t), 'e.db'));
  t.after(() => d.close());
  d.prepare(
    `INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at) VALUES (1, '0xaa', '0x01', 'nyc', 2, 10000, 'mock', 'applied', 0, 0)`,
  ).run();
  return d;
}

test('ceiling = max(P, latestSeq) + C; no purchase before means P = 0', () => {
  assert.equal(nextCeiling(null, 0, 20), 20);
  assert.equal(nextCeiling(null, 7, 20), 27);
  assert.equal(nextCeiling(30, 7, 5), 35);
  assert.equal(nextCeiling(10, 40, 5), 45);
});

test('property: the ceiling never falls, always covers C unseen signals, and never charges for a skipped backlog', () => {
  fc.assert(
    fc.property(
      fc.option(fc.nat(10_000), { nil: null }),
      fc.nat(10_000),
      fc.integer({ min: 2, max: 10_000 }),
      (p, latest, c) => {
        const next = nextCeiling(p, latest, c);
        assert.ok(next >= (p ?? 0) + c);
        assert.ok(next - Math.max(p ?? 0, latest) === c);
        assert.ok(next > latest);
      },
    ),
  );
});

test('applyPurchase upserts per (wallet, city), lowercases the wallet, and accumulates totals', (t) => {
  const d = db(t);
  insertSignals(d, 'nyc', 3);
  const W = '0xAbCdEf0000000000000000000000000000000001';
  d.transaction(() => createStores(d).entitlements.applyPurchase({ wallet: W, city: 'nyc', count: 2, nowMs: 1 }))();
  assert.deepEqual(createStores(d).entitlements.get(W.toLowerCase(), 'nyc'), {
    paidThroughSeq: 5,
    totalPaidSignals: 2,
  });
  assert.deepEqual(createStores(d).entitlements.get(W, 'nyc'), { paidThroughSeq: 5, totalPaidSignals: 2 });
  const r = d.transaction(() =>
    createStores(d).entitlements.applyPurchase({ wallet: W, city: 'nyc', count: 20, nowMs: 2 }),
  )();
  assert.deepEqual(r, { paidThroughSeq: 25, totalPaidSignals: 22, latestSeq: 3 });
  assert.equal(createStores(d).entitlements.get(W, 'miami'), null);
  assert.deepEqual(
    d.prepare('SELECT wallet, city, paid_through_seq, total_paid_signals, updated_at FROM entitlements').all(),
    [{ wallet: W.toLowerCase(), city: 'nyc', paid_through_seq: 25, total_paid_signals: 22, updated_at: 2 }],
  );
});

test('receipt tokens: 256-bit verifier, stored hashed, resolve to the wallet, anything else is null', (t) => {
  const d = db(t);
  const token = createStores(d).receipts.issue('0xAA', 1, 5);
  assert.match(token, /^isr_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{43}$/);
  assert.equal(createStores(d).receipts.walletFor(token), '0xaa');
  const row = d.prepare('SELECT * FROM receipts').get() as Record<string, unknown>;
  assert.ok(!JSON.stringify(row).includes(token.slice(21)));
  assert.equal((row.verifier_hash as Buffer).length, 32);
  const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
  for (const bad of [flipped, token + 'x', token.toUpperCase(), '', 'isr_', `isr_${'-'.repeat(16)}_${'-'.repeat(43)}`])
    assert.equal(createStores(d).receipts.walletFor(bad), null, bad);
  assert.notEqual(createStores(d).receipts.issue('0xaa', 1, 6), token);
});
