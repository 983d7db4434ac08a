import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { startFakeFacilitator, type FacilitatorMode } from '../fakes/facilitator.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buy, buyerA, inApp, signFor, subscribeWith } from './buy.ts';
import { createStores } from '../../src/stores.ts';

const PAY_TO = '0x00000000000000000000000000000000000000aa';

type Options = {
  verifyTimeoutMs: number;
  settleTimeoutMs: number;
  rpc?: boolean;
  verify?: 'always' | 'unless-recovered';
};

async function setup(
  t: Parameters<typeof testApp>[0],
  mode: FacilitatorMode,
  timeouts: Options = { verifyTimeoutMs: 2_000, settleTimeoutMs: 2_000 },
) {
  const fac = await startFakeFacilitator(mode);
  t.after(() => fac.close());
  const { rpc, ...ms } = timeouts;
  // rpc: the settler asks the facilitator's fake chain, as it asks USDC over RPC_URL in live mode.
  const settler = createFacilitatorSettler({
    url: fac.url,
    auth: 'Bearer fac-secret-123',
    ...ms,
    ...(rpc ? { status: (...a: Parameters<typeof fac.status>) => fac.status(...a) } : {}),
  });
  const e = testApp(t, {
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      PAY_TO,
      FACILITATOR_URL: fac.url,
      FACILITATOR_AUTH: 'Bearer fac-secret-123',
      OFAC_REQUIRED: 'false',
    },
    deps: { settler },
  });
  fac.chainTime = () => Math.floor(e.clock.now() / 1000);
  return { ...e, fac, f: inApp(e.app) };
}

test('facilitator success: a signature recovered locally goes straight to /settle (which verifies again)', async (t) => {
  const { f, fac, clock } = await setup(t, 'ok');
  const r = await buy(f, buyerA, 'nyc', 20, clock.now());
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(
    fac.requests.map((q) => q.path),
    ['/settle'],
  );
  const again = await buy(f, buyerA, 'nyc', 20, clock.now());
  assert.equal(again.status, 200);
  assert.deepEqual(
    fac.requests.map((q) => q.path),
    ['/settle', '/settle'],
    'keep-alive reuse of the pooled connection',
  );
});

test('facilitator success with verify: always: /verify then /settle in the x402 v1 wire format, with FACILITATOR_AUTH', async (t) => {
  const { f, fac, db, clock, logger } = await setup(t, 'ok', {
    verifyTimeoutMs: 2_000,
    settleTimeoutMs: 2_000,
    verify: 'always',
  });
  const r = await buy(f, buyerA, 'nyc', 20, clock.now());
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(
    fac.requests.map((q) => q.path),
    ['/verify', '/settle'],
  );
  for (const q of fac.requests) {
    assert.equal(q.authorization, 'Bearer fac-secret-123');
    assert.equal(q.body.x402Version, 1);
    assert.equal(q.body.paymentRequirements.maxAmountRequired, '100000');
    assert.equal(q.body.paymentRequirements.payTo, PAY_TO);
    assert.equal(q.body.paymentRequirements.resource, 'http://127.0.0.1:8402/v1/subscribe?city=nyc&count=20');
    assert.deepEqual(q.body.paymentPayload.payload.authorization.nonce, r.payment.nonce);
    // Nothing a facilitator does not expect: no echoed salt, no binding in the requirements.
    assert.deepEqual(Object.keys(q.body.paymentPayload.payload).sort(), ['authorization', 'signature']);
    assert.deepEqual(q.body.paymentRequirements.extra, { name: 'USD Coin', version: '2' });
  }
  assert.match(r.body.txHash, /^0x[0-9a-f]{64}$/);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 20,
    totalPaidSignals: 20,
  });
  // A replay never reaches the facilitator again.
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 20);
  assert.equal(again.body.idempotent, true);
  assert.equal(fac.requests.length, 2);
  assert.ok(!logger.lines.join('\n').includes('fac-secret-123'));
});

test('facilitator refusals and errors become 402 settlement failed with a reason, nothing credited', async (t) => {
  const cases: [FacilitatorMode, RegExp][] = [
    ['invalid', /^facilitator refused verification: invalid_exact_evm_payload_signature$/],
    ['settle-fails', /^facilitator settlement failed: insufficient_funds$/],
    ['garbage', /^facilitator: \/verify answered HTTP 200 without a valid x402 body$/],
    ['http-500', /^facilitator: \/verify answered HTTP 500 without a valid x402 body$/],
  ];
  for (const [mode, reason] of cases) {
    await t.test(mode, async (t) => {
      const { f, db, clock } = await setup(t, mode, {
        verifyTimeoutMs: 2_000,
        settleTimeoutMs: 2_000,
        verify: 'always',
      });
      const r = await buy(f, buyerA, 'nyc', 2, clock.now());
      assert.equal(r.status, 402);
      assert.equal(r.body.error, PAYMENT_ERRORS.settle);
      assert.match(r.body.reason, reason);
      assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
      assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['failed']);
    });
  }
});

test('without /verify, a payment /settle refuses before any transfer is a definite 402 "not charged", with or without a chain to ask', async (t) => {
  for (const rpc of [false, true]) {
    await t.test(rpc ? 'RPC' : 'no RPC', async (t) => {
      const { f, fac, db, clock } = await setup(t, 'invalid', { verifyTimeoutMs: 2_000, settleTimeoutMs: 2_000, rpc });
      const r = await buy(f, buyerA, 'nyc', 2, clock.now());
      assert.equal(r.status, 402, JSON.stringify(r.body));
      assert.equal(r.body.error, PAYMENT_ERRORS.settle);
      assert.equal(r.body.reason, 'facilitator settlement failed: invalid_exact_evm_payload_signature');
      assert.deepEqual(
        fac.requests.map((q) => q.path),
        ['/settle'],
      );
      assert.equal(fac.chain.size, 0);
      assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
      assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['failed']);
    });
  }
});

test('a fresh claim asks the chain nothing before /settle; an authorization already used by someone else is credited once with no token', async (t) => {
  const { f, fac, db, clock } = await setup(t, 'ok', { verifyTimeoutMs: 2_000, settleTimeoutMs: 2_000, rpc: true });
  let asked = 0;
  const chainStatus = fac.status;
  fac.status = async (...args) => {
    asked++;
    return chainStatus(...args);
  };
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 200);
  assert.ok(r.body.receiptToken, 'our own settlement mints the token');
  assert.equal(asked, 0, 'no RPC before or after a clean /settle');

  // Someone submitted this authorization themselves (it is public on chain) before posting it here.
  const p = await signFor(f, buyerA, 'nyc', 2, clock.now());
  const usedTx = `0x${'cd'.repeat(32)}` as const;
  fac.chain.set(`${buyerA.address.toLowerCase()}:${p.nonce}`, usedTx);
  const other = await subscribeWith(f, p.xPayment, 'nyc', 2);
  assert.equal(other.status, 200, JSON.stringify(other.body));
  assert.equal(other.body.txHash, usedTx);
  assert.equal(other.body.receiptToken, undefined, 'a transfer read from the chain mints no token');
  assert.equal(asked, 1, 'asked once, after /settle refused');
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 4,
    totalPaidSignals: 4,
  });
});

test('a hanging facilitator: a quiet /verify is not charged (402); a quiet /settle is in doubt (503), never "not charged"', async (t) => {
  for (const mode of ['hang-verify', 'hang-settle'] as const) {
    await t.test(mode, async (t) => {
      const { f, db, clock } = await setup(t, mode, { verifyTimeoutMs: 150, settleTimeoutMs: 150, verify: 'always' });
      const r = await buy(f, buyerA, 'nyc', 2, clock.now());
      assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
      if (mode === 'hang-verify') {
        assert.equal(r.status, 402);
        assert.equal(r.body.error, PAYMENT_ERRORS.settle);
        assert.equal(r.body.reason, 'facilitator: timed out after 150 ms');
        assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['failed']);
        return;
      }
      assert.equal(r.status, 503);
      assert.equal(r.body.error, PAYMENT_ERRORS.pending);
      assert.equal(r.body.retryAfterSeconds, 30);
      assert.equal(r.res.headers.get('retry-after'), '30');
      assert.ok(!JSON.stringify(r.body).includes('not charged'));
      assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['in_doubt']);
      // Without a chain to ask, a retry cannot resolve it: still pending, nothing settled blindly.
      const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
      assert.equal(again.status, 503);
    });
  }
});

test('a /settle that transferred and then timed out, failed or answered 502: the chain finds it, credited once, no token on the retry', async (t) => {
  for (const mode of ['settle-then-hang', 'settle-then-502', 'settle-then-fail'] as const) {
    await t.test(mode, async (t) => {
      const { f, fac, db, clock } = await setup(t, mode, { verifyTimeoutMs: 2_000, settleTimeoutMs: 150, rpc: true });
      const r = await buy(f, buyerA, 'nyc', 2, clock.now());
      // The chain says used right after the call: credited in the same request.
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.txHash, fac.chain.get(`${buyerA.address.toLowerCase()}:${r.payment.nonce}`));
      assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
        paidThroughSeq: 2,
        totalPaidSignals: 2,
      });
      fac.mode = 'settle-fails';
      const replay = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
      assert.equal(replay.body.idempotent, true);
      assert.equal(replay.body.receiptToken, undefined);
      assert.equal(fac.requests.filter((q) => q.path === '/settle').length, 1);
      assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
        paidThroughSeq: 2,
        totalPaidSignals: 2,
      });
    });
  }
});

test('in doubt, then the transfer lands: the retry of the same header is credited once without a second settle', async (t) => {
  const { f, fac, db, clock } = await setup(t, 'hang-settle', {
    verifyTimeoutMs: 2_000,
    settleTimeoutMs: 150,
    rpc: true,
  });
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 503);
  // The facilitator's transaction lands later: the chain now shows the authorization used.
  fac.chain.set(`${buyerA.address.toLowerCase()}:${r.payment.nonce}`, `0x${'ab'.repeat(32)}`);
  fac.mode = 'settle-fails';
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(again.status, 200);
  assert.equal(again.body.txHash, `0x${'ab'.repeat(32)}`);
  assert.equal(again.body.receiptToken, undefined, 'a resolved doubt mints no token: POST /v1/receipts does');
  assert.equal(fac.requests.filter((q) => q.path === '/settle').length, 1);
  const replay = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(replay.body.idempotent, true);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 2,
    totalPaidSignals: 2,
  });
});

test('in doubt and still unused on chain: the same authorization is settled again on retry; expired unused: not charged', async (t) => {
  const { f, fac, db, clock } = await setup(t, 'hang-settle', {
    verifyTimeoutMs: 2_000,
    settleTimeoutMs: 150,
    rpc: true,
  });
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 503);
  fac.mode = 'ok';
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(again.status, 200);
  assert.equal(again.body.idempotent, false);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 2,
    totalPaidSignals: 2,
  });

  fac.mode = 'hang-settle';
  const other = await buy(f, buyerA, 'miami', 2, clock.now());
  assert.equal(other.status, 503);
  clock.advance(301_000);
  const late = await subscribeWith(f, other.payment.xPayment, 'miami', 2);
  assert.equal(late.status, 402);
  assert.equal(late.body.error, PAYMENT_ERRORS.settle);
  assert.match(late.body.reason, /expired unused on chain/);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'miami'), null);
});

test('after a definite facilitator failure the same authorization is never settled again ("not charged" stays true); a new one buys', async (t) => {
  const { f, fac, db, clock } = await setup(t, 'settle-fails');
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 402);
  fac.mode = 'ok';
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(again.status, 402);
  assert.equal(again.body.error, PAYMENT_ERRORS.settle);
  assert.equal(fac.requests.filter((q) => q.path === '/settle').length, 1);
  // The bundle's salt moves with a settled purchase or the minute (binding.ts): a refusal moves
  // nothing, so the new authorization is bound to the next minute's salt.
  clock.advance(60_000);
  const fresh = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(fresh.status, 200);
  assert.equal(fresh.body.idempotent, false);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 2,
    totalPaidSignals: 2,
  });
});
