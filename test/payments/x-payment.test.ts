import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { decodeXPayment, MAX_HEADER_CHARS, payloadSchemas } from '../../src/x402/x-payment.ts';
import { encodeXPayment } from '../helpers/x-payment.ts';

const auth = {
  from: '0x1111111111111111111111111111111111111111',
  to: '0x2222222222222222222222222222222222222222',
  value: 10_000n,
  validAfter: 0n,
  validBefore: 1_784_000_300n,
  nonce: `0x${'AB'.repeat(32)}`,
} as const;
const sig = `0x${'11'.repeat(65)}` as Hex;

test('encode/decode round-trips and lowercases the nonce', () => {
  const d = decodeXPayment(encodeXPayment(sig, auth));
  assert.ok(d.ok);
  assert.equal(d.value.authorization.value, 10_000n);
  assert.equal(d.value.authorization.nonce, `0x${'ab'.repeat(32)}`);
  assert.equal(d.value.network, 'eip155:8453');
});

test('network eip155:8453 and base are both accepted; anything else is not', () => {
  assert.ok(decodeXPayment(encodeXPayment(sig, auth, { network: 'base' })).ok);
  assert.deepEqual(decodeXPayment(encodeXPayment(sig, auth, { network: 'base-sepolia' })), {
    ok: false,
    reason: 'network: network must be eip155:8453',
  });
});

test('unreadable headers give a reason, never a throw', () => {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');
  const good = JSON.parse(Buffer.from(encodeXPayment(sig, auth), 'base64').toString());
  const bad: [string, string][] = [
    ['', 'not base64-encoded JSON'],
    ['!!!!', 'not base64-encoded JSON'],
    [enc(null), 'payload: Invalid input: expected object, received null'],
    [
      enc({ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, value: '1.5' } } }),
      'payload.authorization.value: must be a decimal integer string',
    ],
    [
      enc({ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, value: 10000 } } }),
      'payload.authorization.value: Invalid input: expected string, received number',
    ],
    ['A'.repeat(MAX_HEADER_CHARS + 1), 'header too long'],
  ];
  for (const [h, reason] of bad) {
    const r = decodeXPayment(h);
    assert.equal(r.ok, false, h.slice(0, 20));
    if (!r.ok) assert.equal(r.reason, reason);
  }
});

test('the decoder accepts exactly what the zod schema accepts, with the same payload and the same refusal', () => {
  const base = () => ({
    x402Version: 1,
    scheme: 'exact',
    network: 'base',
    extra: 'dropped',
    payload: {
      authorization: { ...JSON.parse(JSON.stringify(auth, (_, v) => (typeof v === 'bigint' ? String(v) : v))), x: 1 },
      salt: `0x${'cd'.repeat(32)}`,
      signature: sig,
    },
  });
  type Shape = ReturnType<typeof base>;
  const cases: ((p: Shape) => unknown)[] = [
    () => undefined,
    (p) => p,
    (p) => ({ ...p, payload: { ...p.payload, salt: undefined } }),
    (p) => ({ ...p, payload: { ...p.payload, salt: null } }),
    (p) => ({ ...p, payload: { ...p.payload, salt: '0x12' } }),
    (p) => ({ ...p, x402Version: 2 }),
    (p) => ({ ...p, x402Version: '1' }),
    (p) => ({ ...p, scheme: 'upto' }),
    (p) => ({ ...p, network: 'eip155:8453' }),
    (p) => ({ ...p, network: 'base-sepolia' }),
    (p) => ({ ...p, network: 8453 }),
    (p) => ({ ...p, payload: [] }),
    (p) => ({ ...p, payload: { ...p.payload, signature: '0x123' } }),
    (p) => ({ ...p, payload: { ...p.payload, authorization: null } }),
    ...(['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const).flatMap((k) => [
      (p: Shape) => ({
        ...p,
        payload: { ...p.payload, authorization: { ...p.payload.authorization, [k]: undefined } },
      }),
      (p: Shape) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, [k]: '01' } } }),
      (p: Shape) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, [k]: 7 } } }),
    ]),
    (p) => [p],
  ];
  for (const make of cases) {
    const json = JSON.parse(JSON.stringify(make(base()) ?? null));
    const header = Buffer.from(JSON.stringify(json)).toString('base64');
    const got = decodeXPayment(header);
    const zod = payloadSchemas().PaymentPayloadV1.safeParse(json);
    assert.equal(got.ok, zod.success, JSON.stringify(json));
    if (got.ok && zod.success) {
      const z = zod.data;
      assert.equal(got.value.network, z.network);
      assert.equal(got.value.signature, z.payload.signature);
      assert.equal(got.value.salt, z.payload.salt?.toLowerCase() ?? null);
      assert.equal(got.value.authorization.nonce, z.payload.authorization.nonce.toLowerCase());
      assert.equal(got.value.authorization.validBefore, BigInt(z.payload.authorization.validBefore));
    } else if (!got.ok && !zod.success) {
      const issue = zod.error.issues[0]!;
      assert.equal(got.reason, `${issue.path.join('.') || 'payload'}: ${issue.message}`);
    }
  }
});
