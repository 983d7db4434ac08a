import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodePaymentHeader, echoedVerbatim } from '../../src/x402/v2.ts';

// decodePaymentHeader reads a well-formed envelope without zod and leaves everything else to zod:
// these pin that both roads give the same answers (a shortcut that accepted more would move money).
const SALT = `0x${'ab'.repeat(32)}`;
const auth = {
  from: `0x${'11'.repeat(20)}`,
  to: `0x${'22'.repeat(20)}`,
  value: '10000',
  validAfter: '0',
  validBefore: '9999999999',
  nonce: `0x${'33'.repeat(32)}`,
};
const good = () => ({
  x402Version: 2,
  resource: { url: 'http://127.0.0.1/v1/signals' },
  accepted: {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '10000',
    asset: '0xa',
    payTo: '0xb',
    extra: { binding: { salt: SALT } },
  },
  payload: { signature: `0x${'cd'.repeat(65)}`, authorization: auth, junk: 1 },
  extensions: { 'payment-identifier': { info: { required: false, id: 'abcdefghijklmnop' } }, bazaar: { big: [1, 2] } },
});
const decode = (v: unknown) =>
  decodePaymentHeader({ version: 2, value: Buffer.from(JSON.stringify(v)).toString('base64') });
const reason = (v: unknown) => {
  const r = decode(v);
  assert.equal(r.ok, false);
  return (r as { reason: string }).reason;
};

test('a well-formed PAYMENT-SIGNATURE decodes: salt from accepted, identifier, accepted terms, no unknown payload keys', () => {
  const r = decode(good());
  assert.ok(r.ok);
  assert.equal(r.value.salt, SALT);
  assert.equal(r.value.identifier, 'abcdefghijklmnop');
  assert.deepEqual(r.value.accepted, { network: 'eip155:8453', amount: '10000', asset: '0xa', payTo: '0xb' });
  assert.deepEqual(Object.keys(r.value).sort(), [
    'accepted',
    'authorization',
    'identifier',
    'network',
    'salt',
    'signature',
  ]);
  assert.equal(r.value.authorization.value, 10000n);
});

test('what the envelope check does not accept gets zod reasons, as before', () => {
  const v = good();
  // A null payload salt is not "no salt": accepted's salt must not stand in for it.
  (v.payload as Record<string, unknown>).salt = null;
  assert.match(reason(v), /^payload\.salt: /);
  const long = good();
  long.accepted.amount = '1'.repeat(81);
  assert.match(reason(long), /^accepted\.amount: /);
  const noBinding = good();
  (noBinding.accepted as Record<string, unknown>).extra = { other: 1 };
  assert.match(reason(noBinding), /^accepted\.extra\.binding: /);
  const badSalt = good();
  badSalt.accepted.extra.binding.salt = '0x12';
  assert.match(reason(badSalt), /^accepted\.extra\.binding\.salt: /);
  const arrayExt = good();
  (arrayExt as Record<string, unknown>).extensions = [];
  assert.match(reason(arrayExt), /^extensions: /);
  const net = good();
  net.accepted.network = 'eip155:1';
  assert.equal(reason(net), 'accepted.network: network must be eip155:8453');
  const v1 = good();
  v1.x402Version = 1;
  assert.match(reason(v1), /^x402Version: /);
  // The payload's own faults are reported with the payload's path, before a bad identifier.
  const badSig = good();
  badSig.payload.signature = 'nope';
  badSig.extensions['payment-identifier'].info.id = 'short';
  assert.match(reason(badSig), /^payload\.signature: /);
  const badId = good();
  badId.extensions['payment-identifier'].info.id = 'short';
  assert.match(reason(badId), /^extensions\.payment-identifier\.info\.id must be /);
});

test('an echo of our own declaration, wherever it sits in the text, decodes as the same JSON not echoed verbatim', () => {
  // The decoder skips parsing what a stock client echoes byte for byte (the Bazaar declaration):
  // it must accept and refuse exactly the texts JSON.parse does, with the same result.
  const declared = { info: { say: 'a "quoted" \\ word', n: [1, { b: null }] }, schema: { type: 'object' } };
  echoedVerbatim('bazaar', declared);
  const echo = `"bazaar":${JSON.stringify(declared)}`;
  const unmatched = echo.replace('":{', '": {'); // the same JSON, not the registered text
  const { bazaar: _, ...extensions } = good().extensions;
  const base = JSON.stringify({ ...good(), extensions });
  const at = (text: string) => decodePaymentHeader({ version: 2, value: Buffer.from(text).toString('base64') });
  const same = (text: string) => assert.deepEqual(at(text), at(text.replace(echo, unmatched)));
  const wellPlaced = JSON.stringify({ ...good(), extensions: { ...extensions, bazaar: declared } });
  assert.ok(wellPlaced.includes(echo) && at(wellPlaced).ok);
  same(wellPlaced);
  fc.assert(
    fc.property(
      fc.nat(base.length),
      fc.constantFrom('', ',', '\\', '"', '{', ':', '[', '"x":'),
      fc.constantFrom('', ',', '}', ']', '"', ':0'),
      (i, before, after) => same(`${base.slice(0, i)}${before}${echo}${after}${base.slice(i)}`),
    ),
    { numRuns: 3000 },
  );
});
