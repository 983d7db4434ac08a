import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { openDb } from '../../src/db/open.ts';
import { mockTxHash } from '../../src/payments/settlers/mock.ts';
import { tempDir } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { checkInvariants } from './invariants.ts';
import { wideLadder, type CityWorld } from './upstreams.ts';
import { CITY_ROWS, lowStreamOf } from '../../src/cities/catalog.ts';
import { parseLabel } from '../../src/buckets/labels.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
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
    'per-stream seq gapless from 1, unique',
    // The deleted seq 2 also breaks the crossing chain (seq 3's old bucket is not seq 1's new one).
    'one signal per (stream, day, bucket); every crossing real, in its direction; dead buckets match it',
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

/** A low stream's signals: readings that fall, dead on the buckets above the low, never below it. */
function lowSignal(seq: number, from: number, to: number, dead: (lo: number) => boolean) {
  const label = (t: number) => `${t - (t % 2)}-${t - (t % 2) + 1}°F`;
  return signalSchema().parse({
    city: 'nyc-low',
    displayName: 'New York City (low)',
    seq,
    targetDate: '2026-07-15',
    marketUrl: 'https://polymarket.com/event/lowest-temperature-in-nyc-on-july-15-2026',
    conditionId: '0x' + seq.toString(16).padStart(64, '0'),
    old: { reading: from, unit: 'F', bucket: label(from) },
    new: { reading: to, unit: 'F', bucket: label(to) },
    buckets: [70, 72, 74, 76, 78, 80].map((lo) => ({
      label: `${lo}-${lo + 1}°F`,
      conditionId: '0x' + 'ab'.repeat(32),
      yes: 0.1,
      no: 0.9,
      midpoint: 0.1,
      ...(dead(lo) ? { dead: true as const } : {}),
    })),
    bucketsAsOf: '2026-07-15T15:00:02.000Z',
    source: 'metar',
    observedAt: '2026-07-15T15:00:00.000Z',
    reportedAt: null,
    channel: 'metar-api',
    rawReport: null,
    reportedValue: null,
    reportedUnit: null,
    reportedPrecision: null,
    availableAt: null,
    storedAt: '2026-07-15T15:00:02.100Z',
  });
}

function lowWorld(published: number[]): Map<string, CityWorld> {
  const labels = wideLadder('F');
  return new Map([
    [
      'nyc-low',
      {
        city: lowStreamOf(CITY_ROWS.find((c) => c.slug === 'nyc')!),
        kind: 'low' as const,
        labels,
        ranges: labels.map((l) => parseLabel(l)!),
        reading: Math.min(...published),
        published: new Map([['2026-07-15', new Set(published)]]),
      },
    ],
  ]);
}

test('the chaos checker holds a low stream to falling readings and dead buckets above the low', (t) => {
  const failedOf = (signals: ReturnType<typeof lowSignal>[]) => {
    const path = join(tempDir(t), 'isocast.db');
    const db = openDb(path);
    const insert = db.prepare(
      'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, 0)',
    );
    for (const p of signals) insert.run(p.city, p.seq, p.targetDate, p.new.bucket, p.observedAt, JSON.stringify(p));
    db.close();
    const checks = checkInvariants({
      dbPath: path,
      ledger: [],
      wallets: [],
      cities: lowWorld([80, 77, 74, 79]),
      botMessages: [],
    });
    return checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
  };
  // 80 -> 77 -> 74: each a fall into a lower bucket, dead exactly on the buckets wholly above the low.
  assert.deepEqual(failedOf([lowSignal(1, 80, 77, (lo) => lo > 77), lowSignal(2, 77, 74, (lo) => lo > 74)]), []);
  const rose = failedOf([lowSignal(1, 80, 77, (lo) => lo > 77), lowSignal(2, 77, 79, (lo) => lo > 79)]);
  assert.equal(rose.length, 1);
  assert.match(rose[0]!, /nyc-low #2: reading did not fall/);
  // A high's rule (dead below the reading) on a low stream is caught.
  const highDead = failedOf([lowSignal(1, 80, 77, (lo) => lo + 1 < 77)]);
  assert.equal(highDead.length, 1);
  assert.match(highDead[0]!, /nyc-low #1: 70-71°F dead=true at a low of 77/);
});
