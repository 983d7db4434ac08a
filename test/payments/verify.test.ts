import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { verifyPayment } from '../../src/payments/verify.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { encodeXPayment } from '../helpers/x-payment.ts';
import { authorizationTypedData } from '../../src/x402/eip3009.ts';
import type { Authorization } from '../../src/x402/networks.ts';
import { BASE_USDC } from '../../packages/isocast-client/src/chain.ts';
import { buyerA, buyerB } from './buy.ts';

const usdc = BASE_USDC as Address;
const payTo = '0x00000000000000000000000000000000000000aa' as Address;
const now = 1_784_000_000;

async function signed(over: Partial<Authorization> = {}, account = buyerA, domainUsdc = usdc) {
  const auth: Authorization = {
    from: account.address,
    to: payTo,
    value: 10_000n,
    validAfter: BigInt(now - 60),
    validBefore: BigInt(now + 300),
    nonce: `0x${'12'.repeat(32)}` as Hex,
    ...over,
  };
  const signature = await account.signTypedData(authorizationTypedData(domainUsdc, auth));
  const d = decodeXPayment(encodeXPayment(signature, auth));
  assert.ok(d.ok);
  return d.value;
}
const terms = { usdc, payTo, priceMicro: 10_000, nowSeconds: now };

test('a correct authorization recovers the lowercase payer', async () => {
  assert.deepEqual(await verifyPayment(await signed(), terms), {
    ok: true,
    payer: buyerA.address.toLowerCase(),
    recovered: true,
  });
});

test('each term is enforced with its own reason', async () => {
  const cases: [string, Promise<Awaited<ReturnType<typeof signed>>>, string][] = [
    ['wrong payTo', signed({ to: buyerB.address }), 'authorization.to is not the settlement wallet'],
    ['underpaid', signed({ value: 9_999n }), 'authorization.value must be exactly 10000'],
    ['overpaid', signed({ value: 10_001n }), 'authorization.value must be exactly 10000'],
    ['not yet valid', signed({ validAfter: BigInt(now + 1) }), 'authorization is not yet valid'],
    ['expired at validBefore', signed({ validBefore: BigInt(now) }), 'authorization has expired'],
    ['too long', signed({ validBefore: BigInt(now + 901) }), 'authorization.validBefore is more than 900 s away'],
    [
      'signed under another token domain',
      signed({}, buyerA, '0x0000000000000000000000000000000000000001'),
      'signature does not match authorization.from',
    ],
  ];
  for (const [name, p, reason] of cases)
    assert.deepEqual(await verifyPayment(await p, terms), { ok: false, reason }, name);
  // validAfter == now and validBefore == now + 1 are inside the window.
  assert.equal(
    (await verifyPayment(await signed({ validAfter: BigInt(now), validBefore: BigInt(now + 1) }), terms)).ok,
    true,
  );
});

test('a signature by someone other than `from` fails unless a chain verifier vouches (smart wallet)', async () => {
  const p = await signed({ from: buyerB.address }, buyerA);
  assert.deepEqual(await verifyPayment(p, terms), { ok: false, reason: 'signature does not match authorization.from' });
  const calls: Address[] = [];
  const wallet = {
    verifyTypedData: async (a: { address: Address }) => {
      calls.push(a.address);
      return true;
    },
  };
  assert.deepEqual(await verifyPayment(p, { ...terms, chainVerifier: wallet }), {
    ok: true,
    payer: buyerB.address.toLowerCase(),
    recovered: false,
  });
  assert.deepEqual(calls, [buyerB.address]);
  const refusing = { verifyTypedData: async () => false };
  assert.equal((await verifyPayment(p, { ...terms, chainVerifier: refusing })).ok, false);
  const broken = {
    verifyTypedData: async () => {
      throw new Error('rpc down');
    },
  };
  assert.equal((await verifyPayment(p, { ...terms, chainVerifier: broken })).ok, false);
});
