import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PaymentRequiredV1Schema, PaymentPayloadV1Schema } from '@x402/core/schemas';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { paymentSchemas } from '../../src/payments/schemas.ts';
import { decodePaymentResponseHeader as decodePaymentResponse } from '@x402/core/http';
import { mockTxHash } from '../../src/payments/settlers/mock.ts';
import { BASE_USDC } from '../../packages/isocast-client/src/chain.ts';
import { MOCK_PAY_TO } from '../../src/payments/pay-to.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buy, buyerA, buyerB, challenge, inApp, signFor, subscribeWith, tamper } from './buy.ts';

const { SubscribeResult, PaymentRequired } = paymentSchemas();
import { createStores } from '../../src/stores.ts';

async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  const f = inApp(e.app);
  return { ...e, f, now: () => e.clock.now() };
}

test('402 challenge carries the spec fields and parses with the published @x402/core v1 schema', async (t) => {
  const { f } = await setup(t);
  const body = (await challenge(f, 'nyc', 20)) as any;
  PaymentRequired.parse(body);
  const std = PaymentRequiredV1Schema.parse(body);
  assert.equal(std.x402Version, 1);
  const a = body.accepts[0];
  assert.deepEqual(
    {
      scheme: a.scheme,
      network: a.network,
      price: a.price,
      payTo: a.payTo,
      mimeType: a.mimeType,
      maxAmountRequired: a.maxAmountRequired,
      asset: a.asset,
    },
    {
      scheme: 'exact',
      network: 'eip155:8453',
      price: '$0.10',
      payTo: MOCK_PAY_TO,
      mimeType: 'application/json',
      maxAmountRequired: '100000',
      asset: BASE_USDC,
    },
  );
  assert.equal(a.resource, 'http://127.0.0.1:8402/v1/subscribe?city=nyc&count=20');
  assert.equal(a.extra.name, 'USD Coin');
  assert.equal(a.extra.version, '2');
  assert.deepEqual(a.extra.binding, body.extra.binding);
  assert.equal(body.extra.binding.formula, 'keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt))');
  assert.equal(body.extra.binding.citySlug, 'nyc');
  assert.equal(body.extra.binding.count, 20);
  assert.match(body.extra.binding.salt, /^0x[0-9a-f]{64}$/);
  assert.equal(body.terms, 'http://127.0.0.1:8402/terms.txt');
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.disclaimer, 'string');
  assert.equal(body.paid_through, undefined);
  // A different count or city gets a different salt.
  const other = (await challenge(f, 'nyc', 21)) as any;
  assert.notEqual(other.extra.binding.salt, body.extra.binding.salt);
});

test('the buyer X-Payment parses with the published @x402/core v1 PaymentPayload schema', async (t) => {
  const { f, now } = await setup(t);
  const p = await signFor(f, buyerA, 'nyc', 2, now());
  const json = JSON.parse(Buffer.from(p.xPayment, 'base64').toString('utf8'));
  PaymentPayloadV1Schema.parse(json);
  assert.equal(json.scheme, 'exact');
  assert.equal(json.network, 'eip155:8453');
});

test('count and city are validated before anything else, with the exact strings', async (t) => {
  const { f } = await setup(t);
  const cases: [string, number, string][] = [
    ['city=nyc', 400, PAYMENT_ERRORS.count],
    ['city=nyc&count=1', 400, PAYMENT_ERRORS.count],
    ['city=nyc&count=0', 400, PAYMENT_ERRORS.count],
    ['city=nyc&count=2.5', 400, PAYMENT_ERRORS.count],
    ['city=nyc&count=-3', 400, PAYMENT_ERRORS.count],
    ['city=nyc&count=abc', 400, PAYMENT_ERRORS.count],
    ['city=nyc&count=10001', 400, 'count must be at most 10000'],
    ['count=2', 400, 'city is required'],
    ['city=atlantis&count=2', 404, 'unknown city'],
    ['city=panama-city&count=2', 404, 'unknown city'],
  ];
  for (const [q, status, error] of cases) {
    // Even a (garbage) payment header does not get past validation.
    const res = await f(`/v1/subscribe?${q}`, { method: 'POST', headers: { 'x-payment': 'garbage' } });
    const body = (await res.json()) as any;
    assert.equal(res.status, status, q);
    assert.equal(body.error, error, q);
    if (status === 400 && error !== 'city is required') assert.equal(body.minSpendUsd, 0.01, q);
    assert.equal(typeof body.disclaimer, 'string');
  }
});

test('a paid subscribe returns SubscribeResult, X-PAYMENT-RESPONSE, a receipt, and moves the ceiling', async (t) => {
  const { f, db, now } = await setup(t);
  insertSignals(db, 'nyc', 7);
  const { status, body, res, payment } = await buy(f, buyerA, 'nyc', 20, now());
  assert.equal(status, 200, JSON.stringify(body));
  SubscribeResult.parse(body);
  assert.deepEqual(
    {
      ok: body.ok,
      city: body.city,
      count: body.count,
      unitPriceUsd: body.unitPriceUsd,
      amountUsd: body.amountUsd,
      latestSeq: body.latestSeq,
      paidThroughSeq: body.paidThroughSeq,
      idempotent: body.idempotent,
    },
    {
      ok: true,
      city: 'nyc',
      count: 20,
      unitPriceUsd: 0.005,
      amountUsd: 0.1,
      latestSeq: 7,
      paidThroughSeq: 27,
      idempotent: false,
    },
  );
  assert.equal(body.txHash, mockTxHash(buyerA.address, payment.nonce));
  assert.match(body.receiptToken, /^isr_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{43}$/);
  const pr = decodePaymentResponse(res.headers.get('x-payment-response')!);
  assert.deepEqual(pr, {
    success: true,
    transaction: body.txHash,
    network: 'eip155:8453',
    payer: buyerA.address.toLowerCase(),
  });
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 27,
    totalPaidSignals: 20,
  });
  const rows = db.prepare('SELECT status, payer, amount_micro FROM payments').all();
  assert.deepEqual(rows, [{ status: 'applied', payer: buyerA.address.toLowerCase(), amount_micro: 100_000 }]);
  // The token is stored hashed: its text is nowhere in the database.
  const stored = db.prepare('SELECT selector, hex(verifier_hash) AS h FROM receipts').all() as {
    selector: string;
    h: string;
  }[];
  assert.equal(stored.length, 1);
  assert.ok(!JSON.stringify(stored).includes(body.receiptToken.slice(21)));
});

test('a replayed X-Payment settles once and answers idempotent with the current state', async (t) => {
  const { f, db, now } = await setup(t);
  insertSignals(db, 'nyc', 3);
  const first = await buy(f, buyerA, 'nyc', 5, now());
  assert.equal(first.body.paidThroughSeq, 8);
  insertSignals(db, 'nyc', 2);
  const again = await subscribeWith(f, first.payment.xPayment, 'nyc', 5);
  assert.equal(again.status, 200);
  assert.equal(again.body.idempotent, true);
  assert.equal(again.body.txHash, first.body.txHash);
  assert.equal(again.body.paidThroughSeq, 8);
  assert.equal(again.body.latestSeq, 5);
  assert.notEqual(again.body.receiptToken, first.body.receiptToken);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 8,
    totalPaidSignals: 5,
  });
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 1);
});

test('ceiling rule: caught-up purchases extend, a buyer who fell behind starts at latestSeq', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'chicago', 10);
  assert.equal((await buy(f, buyerA, 'chicago', 4, clock.now())).body.paidThroughSeq, 14);
  // Still caught up (P=14 >= latest=12): +C on top of P.
  insertSignals(db, 'chicago', 2);
  clock.advance(61_000);
  assert.equal((await buy(f, buyerA, 'chicago', 3, clock.now())).body.paidThroughSeq, 17);
  // Fell behind (P=17 < latest=30): floor raised to 30, never pays for the skipped backlog.
  insertSignals(db, 'chicago', 18);
  clock.advance(61_000);
  const behind = await buy(f, buyerA, 'chicago', 2, clock.now());
  assert.equal(behind.body.paidThroughSeq, 32);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'chicago'), {
    paidThroughSeq: 32,
    totalPaidSignals: 9,
  });
  // Entitlements are per city.
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
});

test('the same bundle bought again in a later window gets a fresh nonce and is charged again', async (t) => {
  const { f, db, clock } = await setup(t);
  const one = await buy(f, buyerA, 'nyc', 2, clock.now());
  clock.advance(60_000);
  const two = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.notEqual(one.payment.nonce, two.payment.nonce);
  assert.equal(two.body.idempotent, false);
  assert.equal(two.body.paidThroughSeq, 4);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 2);
});

test('verification failures answer 402 and never reach settlement', async (t) => {
  const { f, db, now } = await setup(t);
  const good = await signFor(f, buyerA, 'nyc', 2, now());
  const signedByB = await signFor(f, buyerB, 'nyc', 2, now());
  const bad: [string, string][] = [
    ['not base64 json', '%%%'],
    [
      'wrong x402Version',
      tamper(good.xPayment, (j) => {
        j.x402Version = 2;
      }),
    ],
    [
      'wrong scheme',
      tamper(good.xPayment, (j) => {
        j.scheme = 'upto';
      }),
    ],
    [
      'wrong network',
      tamper(good.xPayment, (j) => {
        j.network = 'eip155:1';
      }),
    ],
    [
      'from is not the signer',
      tamper(signedByB.xPayment, (j) => {
        j.payload.authorization.from = buyerA.address;
      }),
    ],
    [
      'value changed after signing',
      tamper(good.xPayment, (j) => {
        j.payload.authorization.value = '20000';
      }),
    ],
    [
      'to changed after signing',
      tamper(good.xPayment, (j) => {
        j.payload.authorization.to = buyerB.address;
      }),
    ],
    [
      'missing signature',
      tamper(good.xPayment, (j) => {
        delete j.payload.signature;
      }),
    ],
  ];
  for (const [name, header] of bad) {
    const r = await subscribeWith(f, header, 'nyc', 2);
    assert.equal(r.status, 402, name);
    assert.equal(r.body.error, PAYMENT_ERRORS.verify, name);
    assert.equal(typeof r.body.reason, 'string', name);
  }
  // A correctly signed authorization for a different price is also refused (exact value).
  const forTwenty = await signFor(f, buyerA, 'nyc', 20, now());
  const wrongPrice = await subscribeWith(f, forTwenty.xPayment, 'nyc', 2);
  assert.equal(wrongPrice.status, 402);
  assert.equal(wrongPrice.body.error, PAYMENT_ERRORS.verify);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 0);
});

test('expired and not-yet-valid authorizations are refused', async (t) => {
  const { f, clock } = await setup(t);
  const p = await signFor(f, buyerA, 'nyc', 2, clock.now());
  clock.advance(301_000);
  const late = await subscribeWith(f, p.xPayment, 'nyc', 2);
  assert.equal(late.status, 402);
  assert.equal(late.body.error, PAYMENT_ERRORS.verify);
  assert.equal(late.body.reason, 'authorization has expired');
  const early = await signFor(f, buyerA, 'nyc', 2, clock.now() + 3_600_000);
  const r = await subscribeWith(f, early.xPayment, 'nyc', 2);
  assert.equal(r.body.reason, 'authorization is not yet valid');
});

test('binding mismatch: an authorization for one bundle cannot buy another, nor use a made-up nonce', async (t) => {
  const { f, db, now } = await setup(t);
  // Same price (count 2 vs 2 in another city): only the binding tells them apart.
  const forChicago = await signFor(f, buyerA, 'chicago', 2, now());
  const r = await subscribeWith(f, forChicago.xPayment, 'nyc', 2);
  assert.equal(r.status, 402);
  assert.equal(r.body.error, PAYMENT_ERRORS.binding);
  // A body whose salt was forged by the client.
  const body = (await challenge(f, 'nyc', 2)) as any;
  body.accepts[0].extra.binding.salt = `0x${'00'.repeat(32)}`;
  const { payFor402 } = await import('../../packages/isocast-client/src/index.ts');
  const forged = await payFor402(body, buyerA, { nowMs: now() });
  const r2 = await subscribeWith(f, forged.xPayment, 'nyc', 2);
  assert.equal(r2.status, 402);
  assert.equal(r2.body.error, PAYMENT_ERRORS.binding);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 0);
});

test('a sanctioned payer gets 403 and nothing is settled', async (t) => {
  const { f, db, now, logger } = await setup(t, { OFAC_EXTRA: buyerA.address });
  const r = await buy(f, buyerA, 'nyc', 2, now());
  assert.equal(r.status, 403);
  assert.equal(r.body.error, PAYMENT_ERRORS.sanctioned);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 0);
  assert.ok(logger.lines.some((l) => l.includes('sanctioned payer refused')));
  // Another wallet is fine.
  assert.equal((await buy(f, buyerB, 'nyc', 2, now())).status, 200);
});

test('screening required but no list loaded: 503 and nothing settled', async (t) => {
  const { f, db, now } = await setup(t, { OFAC_REQUIRED: 'true' });
  const r = await buy(f, buyerA, 'nyc', 2, now());
  assert.equal(r.status, 503);
  assert.equal(r.body.error, PAYMENT_ERRORS.screening);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 0);
});

test('checks run in the spec order: verify before sanctions before binding', async (t) => {
  const { f, now } = await setup(t, { OFAC_EXTRA: buyerA.address });
  const forChicago = await signFor(f, buyerA, 'chicago', 2, now());
  // An echoed salt issued for another bundle fails its tag before any signature recovery
  // (issue 12 item 10): the binding mismatch comes first even for a sanctioned payer.
  assert.equal((await subscribeWith(f, forChicago.xPayment, 'nyc', 2)).body.error, PAYMENT_ERRORS.binding);
  // Sanctioned AND mis-bound by the nonce alone (no salt echoed): the sanctions screen answers first.
  const windowBound = tamper(forChicago.xPayment, (j) => {
    delete j.payload.salt;
  });
  assert.equal((await subscribeWith(f, windowBound, 'nyc', 2)).status, 403);
  // Sanctioned AND unverifiable: verification answers first.
  const broken = tamper(forChicago.xPayment, (j) => {
    j.payload.authorization.value = '1';
  });
  assert.equal((await subscribeWith(f, broken, 'nyc', 2)).body.error, PAYMENT_ERRORS.verify);
});

test('entitlement failure after settlement: 502 refund queued, a refund row, the payment not applied', async (t) => {
  const { f, db, now, logger } = await setup(t);
  db.exec(
    `CREATE TEMP TRIGGER entitlements_fail BEFORE INSERT ON entitlements BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`,
  );
  const r = await buy(f, buyerA, 'nyc', 2, now());
  assert.equal(r.status, 502);
  assert.deepEqual(
    { error: r.body.error, refund: r.body.refund },
    { error: PAYMENT_ERRORS.entitlement, refund: 'queued' },
  );
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
  assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['refund_queued']);
  const refunds = db.prepare('SELECT wallet, amount_micro, status, tx_hash FROM refunds').all() as any[];
  assert.deepEqual(refunds, [
    {
      wallet: buyerA.address.toLowerCase(),
      amount_micro: 10_000,
      status: 'queued',
      tx_hash: mockTxHash(buyerA.address, r.payment.nonce),
    },
  ]);
  assert.equal(db.prepare('SELECT count(*) FROM receipts').pluck().get(), 0);
  assert.ok(logger.lines.some((l) => l.includes('refund queued')));
  // The same payment again is not applied twice or charged again: still 502, still one refund.
  db.exec('DROP TRIGGER entitlements_fail');
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(again.status, 502);
  assert.equal(db.prepare('SELECT count(*) FROM refunds').pluck().get(), 1);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
});
