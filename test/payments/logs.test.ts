import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, TEST_SECRET } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { buy, buyerA, buyerB, inApp, signFor, subscribeWith, tamper } from './buy.ts';

test('payment headers, signatures, receipt tokens and secrets never reach the logs', async (t) => {
  const e = testApp(t, { env: { OFAC_EXTRA: buyerB.address, LOG_LEVEL: 'debug' } });
  const f = inApp(e.app);
  insertSignals(e.db, 'nyc', 3);
  const secrets: string[] = [TEST_SECRET.toString('hex')];

  const ok = await buy(f, buyerA, 'nyc', 2, e.clock.now());
  secrets.push(ok.payment.xPayment, ok.payment.signature, ok.body.receiptToken);
  const replay = await subscribeWith(f, ok.payment.xPayment, 'nyc', 2);
  assert.equal(replay.body.receiptToken, undefined, 'a replay mints no token');
  const sanctioned = await buy(f, buyerB, 'nyc', 2, e.clock.now());
  secrets.push(sanctioned.payment.xPayment, sanctioned.payment.signature);
  const bad = tamper((await signFor(f, buyerA, 'nyc', 3, e.clock.now())).xPayment, (j) => {
    j.payload.authorization.value = '1';
  });
  secrets.push(bad);
  await subscribeWith(f, bad, 'nyc', 3);
  await f('/v1/signals?city=nyc', { headers: { authorization: `Bearer ${ok.body.receiptToken}` } });
  await f('/v1/signals?city=nyc', {
    headers: { authorization: 'Bearer isr_AAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' },
  });
  e.db.exec(`CREATE TEMP TRIGGER boom BEFORE UPDATE ON entitlements BEGIN SELECT RAISE(ABORT, 'nope'); END`);
  e.clock.advance(61_000);
  const refunded = await buy(f, buyerA, 'nyc', 2, e.clock.now());
  assert.equal(refunded.status, 502);
  secrets.push(refunded.payment.xPayment, refunded.payment.signature);

  const log = e.logger.lines.join('\n');
  assert.ok(e.logger.lines.length >= 3, 'the flow logged something');
  for (const s of secrets) {
    assert.ok(!log.includes(s), `leaked ${s.slice(0, 12)}...`);
    // Not even a long fragment of it.
    assert.ok(!log.includes(s.slice(-40)), `leaked the tail of ${s.slice(0, 12)}...`);
  }
  assert.ok(!log.includes('isr_'));
});
