import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listen, testApp } from '../helpers/app.ts';
import { startFakeFacilitator, type FacilitatorMode } from '../fakes/facilitator.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { entitlementOf } from '../../src/entitlements/index.ts';
import { PAYMENT_ERRORS } from '../../src/payments/errors.ts';
import { buy, buyerA, over, subscribeWith } from './buy.ts';

const PAY_TO = '0x00000000000000000000000000000000000000aa';

type Lookup = NonNullable<Parameters<typeof createFacilitatorSettler>[0]['lookup']>;

async function setup(t: Parameters<typeof testApp>[0], mode: FacilitatorMode, timeouts: { verifyTimeoutMs: number; settleTimeoutMs: number; lookup?: Lookup } = { verifyTimeoutMs: 2_000, settleTimeoutMs: 2_000 }) {
  const fac = await startFakeFacilitator(mode);
  t.after(() => fac.close());
  const settler = createFacilitatorSettler({ url: fac.url, auth: 'Bearer fac-secret-123', ...timeouts });
  const e = testApp(t, { env: { PAYMENT_MODE: 'live', FEED: 'live', PAY_TO, FACILITATOR_URL: fac.url, FACILITATOR_AUTH: 'Bearer fac-secret-123', OFAC_REQUIRED: 'false' }, deps: { settler } });
  return { ...e, fac, f: over(await listen(t, e.app.fetch)) };
}

test('facilitator success: /verify then /settle in the x402 v1 wire format, with FACILITATOR_AUTH', async (t) => {
  const { f, fac, db, clock, logger } = await setup(t, 'ok');
  const r = await buy(f, buyerA, 'nyc', 20, clock.now());
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(fac.requests.map((q) => q.path), ['/verify', '/settle']);
  for (const q of fac.requests) {
    assert.equal(q.authorization, 'Bearer fac-secret-123');
    assert.equal(q.body.x402Version, 1);
    assert.equal(q.body.paymentRequirements.maxAmountRequired, '100000');
    assert.equal(q.body.paymentRequirements.payTo, PAY_TO);
    assert.equal(q.body.paymentRequirements.resource, 'http://127.0.0.1:8402/v1/subscribe?city=nyc&count=20');
    assert.deepEqual(q.body.paymentPayload.payload.authorization.nonce, r.payment.nonce);
  }
  assert.match(r.body.txHash, /^0x[0-9a-f]{64}$/);
  assert.deepEqual(entitlementOf(db, buyerA.address, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
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
      const { f, db, clock } = await setup(t, mode);
      const r = await buy(f, buyerA, 'nyc', 2, clock.now());
      assert.equal(r.status, 402);
      assert.equal(r.body.error, PAYMENT_ERRORS.settle);
      assert.match(r.body.reason, reason);
      assert.equal(entitlementOf(db, buyerA.address, 'nyc'), null);
      assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['failed']);
    });
  }
});

test('a hanging facilitator is cut off by the timeout and answered 402, for verify and for settle', async (t) => {
  for (const mode of ['hang-verify', 'hang-settle'] as const) {
    await t.test(mode, async (t) => {
      const { f, db, clock } = await setup(t, mode, { verifyTimeoutMs: 150, settleTimeoutMs: 150 });
      const r = await buy(f, buyerA, 'nyc', 2, clock.now());
      assert.equal(r.status, 402);
      assert.equal(r.body.error, PAYMENT_ERRORS.settle);
      assert.equal(r.body.reason, mode === 'hang-verify'
        ? 'facilitator: timed out after 150 ms'
        : 'facilitator /settle gave no clear answer (timed out after 150 ms); retry the same payment to resolve it');
      assert.equal(entitlementOf(db, buyerA.address, 'nyc'), null);
      // A quiet /settle may have moved money, so its claim stays open for a lookup; a refused
      // /verify moved nothing.
      assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), [mode === 'hang-verify' ? 'failed' : 'claimed']);
    });
  }
});

test('a /settle that timed out but landed on chain is found by the RPC lookup on retry and credited once', async (t) => {
  const landed = new Map<string, `0x${string}`>();
  const lookup: Lookup = async (payer, nonce) => {
    const tx = landed.get(`${payer.toLowerCase()}:${nonce}`);
    return tx ? { found: tx } : { found: null };
  };
  const { f, fac, db, clock } = await setup(t, 'hang-settle', { verifyTimeoutMs: 2_000, settleTimeoutMs: 150, lookup });
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 402);
  // The facilitator did submit it: the chain now shows the authorization used.
  landed.set(`${buyerA.address.toLowerCase()}:${r.payment.nonce}`, `0x${'ab'.repeat(32)}`);
  fac.mode = 'settle-fails';
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(again.status, 200);
  assert.equal(again.body.txHash, `0x${'ab'.repeat(32)}`);
  assert.deepEqual(entitlementOf(db, buyerA.address, 'nyc'), { paidThroughSeq: 2, totalPaidSignals: 2 });
  const replay = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(replay.body.idempotent, true);
  assert.deepEqual(entitlementOf(db, buyerA.address, 'nyc'), { paidThroughSeq: 2, totalPaidSignals: 2 });
});

test('after a failed facilitator settlement the same payment can be retried and succeeds once', async (t) => {
  const { f, fac, db, clock } = await setup(t, 'settle-fails');
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 402);
  fac.mode = 'ok';
  const again = await subscribeWith(f, r.payment.xPayment, 'nyc', 2);
  assert.equal(again.status, 200);
  assert.equal(again.body.idempotent, false);
  assert.deepEqual(entitlementOf(db, buyerA.address, 'nyc'), { paidThroughSeq: 2, totalPaidSignals: 2 });
});
