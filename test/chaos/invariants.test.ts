import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { openDb } from '../../src/db/open.ts';
import { mockTxHash } from '../../src/payments/settlers/mock.ts';
import { tempDir } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { checkInvariants } from './invariants.ts';
import { makeWallets, type LedgerEntry } from './driver.ts';

/** The checker itself must see violations, or a green chaos table means nothing. */
test('the chaos checker reports a double application, a lost payment, a seq gap, a broken crossing chain and a duplicate push', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  const [w] = makeWallets(1, 1, ['nyc']);
  const payer = w!.account.address.toLowerCase();
  const nonce = ('0x' + '11'.repeat(32)) as Hex;
  db.prepare(`INSERT INTO payments (payer, nonce, city, count, amount_micro, settler, status, tx_hash, created_at, updated_at)
    VALUES (?, ?, 'nyc', 2, 10000, 'mock', 'applied', ?, 0, 0)`).run(
    payer,
    nonce,
    mockTxHash(payer as Address, nonce).toLowerCase(),
  );
  // Applied twice: the entitlement holds 4 signals for one 2-signal payment.
  db.prepare(
    `INSERT INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (?, 'nyc', 4, 4, 0)`,
  ).run(payer);
  insertSignals(db, 'nyc', 3);
  db.prepare('DELETE FROM signals WHERE city = ? AND seq = 2').run('nyc');
  db.close();

  const ledger: LedgerEntry[] = [
    {
      payer,
      nonce,
      city: 'nyc',
      count: 2,
      via: 'subscribe',
      xPayment: '',
      copiesSent: 2,
      outcome: 'ok',
      freshApplications: 2,
    },
    {
      payer,
      nonce: ('0x' + '22'.repeat(32)) as Hex,
      city: 'nyc',
      count: 2,
      via: 'subscribe',
      xPayment: '',
      copiesSent: 1,
      outcome: 'ok',
      freshApplications: 1,
    },
  ];
  const push = {
    chatId: w!.chatId,
    text: 'isocast signal #1: NYC, market day 2026-07-15 (city-local)',
    atMs: 0,
    body: {},
  };
  const checks = checkInvariants({ dbPath: path, ledger, wallets: [w!], cities: new Map(), botMessages: [push, push] });
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  assert.deepEqual(failed, [
    'driver ledger == payments table (no lost, no phantom, no double)',
    'sum totalPaidSignals == sum of applied counts',
    'per-city seq gapless from 1, unique',
    // The deleted seq 2 also breaks the crossing chain (seq 3's old bucket is not seq 1's new one).
    'one signal per (city, day, bucket); every crossing real',
    'no chat message twice; none beyond entitlement',
  ]);
});

test('the settlement checker reports a failed payment whose transfer exists, a false "not charged" and an unapplied transfer', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  const [w] = makeWallets(2, 1, ['nyc']);
  const payer = w!.account.address.toLowerCase();
  const n1 = ('0x' + '33'.repeat(32)) as Hex;
  const n2 = ('0x' + '44'.repeat(32)) as Hex;
  db.prepare(`INSERT INTO payments (payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at)
    VALUES (?, ?, 'nyc', 2, 10000, 'facilitator', 'failed', 0, 0)`).run(payer, n1);
  db.close();
  const ledger: LedgerEntry[] = [
    {
      payer,
      nonce: n1,
      city: 'nyc',
      count: 2,
      via: 'subscribe',
      xPayment: '',
      copiesSent: 1,
      outcome: 'not-charged',
      freshApplications: 0,
      toldNotCharged: true,
    },
  ];
  const transfers = new Map([
    [`${payer}:${n1}`, { txHash: '0x' + 'aa'.repeat(32) }],
    [`${payer}:${n2}`, { txHash: '0x' + 'bb'.repeat(32) }],
  ]);
  const checks = checkInvariants({
    dbPath: path,
    ledger,
    wallets: [w!],
    cities: new Map(),
    botMessages: [],
    transfers,
  });
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  assert.ok(failed.includes('every transfer on chain applied exactly once or refunded'));
  assert.ok(failed.includes('no payment failed while its transfer exists'));
  assert.ok(failed.includes('no buyer told "not charged" for a transfer that exists'));
});
