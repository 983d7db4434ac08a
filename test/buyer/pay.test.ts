import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recoverTypedDataAddress, type Address } from 'viem';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { paymentRequired } from '../../src/payments/envelope.ts';
import { FIRST_STEP, bindingNonce, currentSalt } from '../../src/payments/binding.ts';
import { authorizationTypedData } from '../../src/x402/eip3009.ts';
import { BASE_USDC } from '../../packages/isocast-client/src/chain.ts';
import { buyerA } from '../payments/buy.ts';

const nowMs = Date.parse('2026-07-15T15:00:00Z');
const body = () =>
  JSON.parse(
    JSON.stringify(
      paymentRequired({
        city: 'nyc',
        count: 20,
        resource: 'http://x/v1/subscribe?city=nyc&count=20',
        payTo: '0x00000000000000000000000000000000000000aa',
        usdc: BASE_USDC as Address,
        salt: currentSalt(Buffer.alloc(32, 3), { city: 'nyc', count: 20, step: FIRST_STEP, nowMs }),
        termsUrl: 'http://x/terms.txt',
        mode: 'mock',
      }),
    ),
  );

test('payFor402 binds the nonce, signs exactly the asked amount to payTo, and encodes a decodable X-Payment', async () => {
  const b = body();
  const p = await payFor402(b, buyerA, { nowMs });
  assert.equal(p.nonce, bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt: b.extra.binding.salt }));
  const d = decodeXPayment(p.xPayment);
  assert.ok(d.ok);
  const a = d.value.authorization;
  assert.deepEqual(
    [a.from, a.to, a.value, a.validAfter, a.validBefore],
    [
      buyerA.address,
      '0x00000000000000000000000000000000000000aa',
      100_000n,
      BigInt(nowMs / 1000 - 60),
      BigInt(nowMs / 1000 + 300),
    ],
  );
  assert.equal(
    await recoverTypedDataAddress({ ...authorizationTypedData(BASE_USDC as Address, a), signature: d.value.signature }),
    buyerA.address,
  );
  assert.equal(p.city, 'nyc');
  assert.equal(p.count, 20);
});

test('validForSeconds is honoured but capped at maxTimeoutSeconds; top-level binding is enough; network base works', async () => {
  const short = await payFor402(body(), buyerA, { nowMs, validForSeconds: 30 });
  assert.equal(short.authorization.validBefore, BigInt(nowMs / 1000 + 30));
  const long = await payFor402(body(), buyerA, { nowMs, validForSeconds: 10_000 });
  assert.equal(long.authorization.validBefore, BigInt(nowMs / 1000 + 300));
  const b = body();
  delete b.accepts[0].extra.binding;
  b.accepts[0].network = 'base';
  const p = await payFor402(b, buyerA, { nowMs });
  assert.equal(JSON.parse(Buffer.from(p.xPayment, 'base64').toString()).network, 'base');
});

test('bodies that cannot be paid are refused with a clear error', async () => {
  const noBinding = body();
  delete noBinding.accepts[0].extra.binding;
  delete noBinding.extra;
  await assert.rejects(payFor402(noBinding, buyerA, { nowMs }), /no extra.binding/);
  const otherNet = body();
  otherNet.accepts[0].network = 'eip155:1';
  await assert.rejects(payFor402(otherNet, buyerA, { nowMs }), /not an exact-scheme payment on Base \(eip155:8453\)/);
  await assert.rejects(payFor402({ x402Version: 2, accepts: [] }, buyerA, { nowMs }));
});

test('saltEcho: the served salt goes back as payload.salt; without it the payload stays plain x402 v1', async () => {
  const echo = body();
  const salt = `0x${'5a'.repeat(32)}`;
  echo.extra.binding = { ...echo.extra.binding, salt, saltEcho: 'payload.salt' };
  echo.accepts[0].extra.binding = echo.extra.binding;
  const p = await payFor402(echo, buyerA, { nowMs });
  const sent = JSON.parse(Buffer.from(p.xPayment, 'base64').toString());
  assert.equal(sent.payload.salt, salt);
  assert.equal(
    sent.payload.authorization.nonce,
    bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt: salt as `0x${string}` }),
  );
  assert.ok(decodeXPayment(p.xPayment).ok, 'the current server decoder still accepts it');
  // An older server asks for no echo: the payload stays the plain x402 v1 shape.
  const old = body();
  delete old.extra.binding.saltEcho;
  delete old.accepts[0].extra.binding.saltEcho;
  const plain = JSON.parse(Buffer.from((await payFor402(old, buyerA, { nowMs })).xPayment, 'base64').toString());
  assert.deepEqual(Object.keys(plain.payload).sort(), ['authorization', 'signature']);
  const odd = body();
  odd.accepts[0].extra.binding.saltEcho = 'header.salt';
  await assert.rejects(payFor402(odd, buyerA, { nowMs }), /salt echoed as header\.salt/);
});

test('the module refuses what the CLI refuses: wrong price, token, payTo, cap; a test token only when named', async () => {
  const inflated = body();
  inflated.accepts[0].maxAmountRequired = '5000000000';
  await assert.rejects(payFor402(inflated, buyerA, { nowMs }), /asks for 5000 USDC/);
  const token = body();
  token.accepts[0].asset = '0x2222222222222222222222222222222222222222';
  await assert.rejects(payFor402(token, buyerA, { nowMs }), /not USDC on Base/);
  const ok = await payFor402(token, buyerA, { nowMs, expect: { usdc: '0x2222222222222222222222222222222222222222' } });
  assert.equal(ok.amountAtomic, 100_000n);
  await assert.rejects(
    payFor402(body(), buyerA, { nowMs, expect: { payTo: '0x00000000000000000000000000000000000000bb' } }),
    /publishes 0x0+bb/,
  );
  await assert.rejects(
    payFor402(body(), buyerA, { nowMs, expect: { maxAtomic: 99_999n } }),
    /above your cap of 0\.099999 USDC/,
  );
  const long = await payFor402(body(), buyerA, { nowMs, validForSeconds: 10_000 });
  assert.ok(long.authorization.validBefore - BigInt(nowMs / 1000) <= 900n, 'never longer than the server accepts');
});
