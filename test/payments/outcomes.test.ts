import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS, paymentRequired, rateLimited } from '../../src/lib/api-errors.ts';
import { ApiError } from '../../src/lib/errors.ts';
import type { Purchase } from '../../src/payments/ledger.ts';
import type { PurchaseOutcome } from '../../src/payments/outcomes.ts';
import { purchaseOf } from '../../src/paywall/refusal.ts';

/** The paywall turns every purchase outcome into its answer in one place: the Purchase, or the catalog's error. */
const thrown = (o: PurchaseOutcome, version: 1 | 2 = 1): ApiError => {
  try {
    purchaseOf(o, {
      version,
      exhausted: (s) =>
        paymentRequired(
          'exhausted',
          { error: ERRORS.exhausted.message, paid_through: s.paidThrough, latest: s.latest },
          {},
        ),
    });
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err;
  }
  assert.fail('expected a thrown error');
};
type Refusal = Extract<PurchaseOutcome, { kind: 'refused' }>['refusal'];
const refused = (refusal: Refusal): PurchaseOutcome => ({ kind: 'refused', refusal });

test('an applied or known outcome answers its purchase', () => {
  const purchase = { city: 'nyc', count: 20 } as Purchase;
  assert.equal(purchaseOf({ kind: 'applied', purchase }, { version: 1 }), purchase);
  assert.equal(purchaseOf({ kind: 'known', purchase }, { version: 2 }), purchase);
});

test('every other outcome is the catalog entry for it, with its data', () => {
  const pending = thrown({ kind: 'in_doubt', retryAfterSeconds: 7 });
  assert.equal(pending.code, 'settlement_pending');
  assert.equal(pending.headers['retry-after'], '7');
  const failed = thrown({ kind: 'failed', reason: 'nonce spent' });
  assert.deepEqual([failed.code, failed.extra.reason], ['settlement_failed', 'nonce spent']);
  assert.equal(thrown({ kind: 'refunded' }).code, 'entitlement_failed');
  const cases: [Refusal, string][] = [
    [{ why: 'shutting_down' }, 'shutting_down'],
    [{ why: 'verification_failed', reason: 'bad' }, 'payment_verification_failed'],
    [{ why: 'binding_mismatch' }, 'binding_mismatch'],
    [{ why: 'bound_elsewhere' }, 'binding_mismatch'],
    [{ why: 'sanctioned' }, 'sanctioned'],
    [{ why: 'screening_unavailable' }, 'screening_unavailable'],
    [{ why: 'identifier_conflict' }, 'payment_identifier_conflict'],
    [{ why: 'exhausted', paidThrough: 20, latest: 25 }, 'exhausted'],
  ];
  for (const [refusal, code] of cases) {
    const err = thrown(refused(refusal));
    assert.equal(err.code, code, refusal.why);
    assert.equal(err.status, ERRORS[code as keyof typeof ERRORS].status, refusal.why);
  }
  assert.equal(
    thrown(refused({ why: 'two_headers' })).message,
    'send exactly one X-Payment or PAYMENT-SIGNATURE header (two were sent)',
  );
  const limit = rateLimited(3);
  assert.equal(thrown(refused({ why: 'limited', error: limit })), limit);
});

test('an authorization bound to another bundle says why on v2 only', () => {
  assert.equal(thrown(refused({ why: 'bound_elsewhere' }), 1).extra.reason, undefined);
  assert.match(String(thrown(refused({ why: 'bound_elsewhere' }), 2).extra.reason), /another bundle/);
});
