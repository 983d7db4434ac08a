import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Address, Hex } from 'viem';
import { decodeXPayment, MAX_HEADER_CHARS } from '../../src/x402/x-payment.ts';
import { encodeXPayment } from '../helpers/x-payment.ts';
import { parseCount, parseSince, requireCity } from '../../src/payments/bundle.ts';
import { MAX_COUNT, MIN_COUNT } from '../../packages/isocast-client/src/pricing.ts';
import { parseDeliveryBody } from '../../src/delivery/schemas.ts';
import { formatLabel, parseLabel } from '../../src/buckets/labels.ts';
import { ApiError } from '../../src/lib/errors.ts';

/**
 * Property tests of every input decoder the HTTP surface has: the X-Payment header, the bundle
 * query validators (count, since, city), the delivery body and the bucket label parser. The
 * property is always the same: any input gives a value that satisfies the contract or a clean,
 * expected refusal; nothing else escapes.
 */
const RUNS = { numRuns: 2_000, seed: 0x15_0c_a5_7 };

const hexOf = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
const authorization = fc.record({
  from: hexOf(20),
  to: hexOf(20),
  value: uint256,
  validAfter: uint256,
  validBefore: uint256,
  nonce: hexOf(32),
});
const validHeader = fc.tuple(hexOf(65), authorization).map(([sig, a]) => ({
  sig,
  a: { ...a, from: a.from as Address, to: a.to as Address },
  header: encodeXPayment(sig, { ...a, from: a.from as Address, to: a.to as Address }),
}));

/** Throws unless `fn` either returns or throws an ApiError whose status is in `statuses`. */
function refusesCleanly<T>(fn: () => T, statuses: number[]): T | undefined {
  try {
    return fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, `not an ApiError: ${String(err)}`);
    assert.ok(statuses.includes(err.status), `status ${err.status}`);
    return undefined;
  }
}

test('X-Payment decoder: any string, any bytes, any JSON never throws', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (s) => {
      decodeXPayment(s);
    }),
    RUNS,
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 600 }), (b) => {
      decodeXPayment(Buffer.from(b).toString('base64'));
    }),
    RUNS,
  );
  fc.assert(
    fc.property(fc.jsonValue(), (j) => {
      const r = decodeXPayment(Buffer.from(JSON.stringify(j) ?? 'null').toString('base64'));
      assert.equal(r.ok, false);
    }),
    RUNS,
  );
});

test('X-Payment decoder: encode -> decode is the identity on every field', () => {
  fc.assert(
    fc.property(validHeader, ({ sig, a, header }) => {
      const r = decodeXPayment(header);
      assert.ok(r.ok);
      assert.equal(r.value.signature, sig);
      assert.equal(r.value.authorization.from, a.from);
      assert.equal(r.value.authorization.value, a.value);
      assert.equal(r.value.authorization.validBefore, a.validBefore);
      assert.equal(r.value.authorization.nonce, a.nonce.toLowerCase());
    }),
    RUNS,
  );
});

test('X-Payment decoder: a valid payload with any one field replaced is refused unless still valid', () => {
  const paths = [
    ['x402Version'],
    ['scheme'],
    ['network'],
    ['payload'],
    ['payload', 'signature'],
    ['payload', 'authorization'],
    ...['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'].map((k) => ['payload', 'authorization', k]),
  ];
  fc.assert(
    fc.property(
      validHeader,
      fc.constantFrom(...paths),
      fc.oneof(fc.jsonValue(), fc.constant(undefined)),
      ({ header }, path, value) => {
        const json = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
        let at = json;
        for (const k of path.slice(0, -1)) at = at[k];
        at[path.at(-1)!] = value;
        const r = decodeXPayment(Buffer.from(JSON.stringify(json)).toString('base64'));
        if (r.ok) {
          // Only a replacement by an equally valid value may pass.
          assert.equal(typeof r.value.signature, 'string');
          assert.match(r.value.authorization.nonce, /^0x[0-9a-f]{64}$/);
        }
      },
    ),
    RUNS,
  );
});

test('X-Payment decoder: oversized headers are refused before decoding', () => {
  fc.assert(
    fc.property(fc.integer({ min: MAX_HEADER_CHARS + 1, max: MAX_HEADER_CHARS * 4 }), (n) => {
      assert.deepEqual(decodeXPayment('A'.repeat(n)), { ok: false, reason: 'header too long' });
    }),
    { numRuns: 50 },
  );
});

const queryValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(''),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.double().map(String),
  fc.stringMatching(/^[0-9]{1,20}$/),
  fc.stringMatching(/^[ +-]?0*[0-9]{1,12}(\.[0-9]+)?(e[0-9]+)?$/),
);

test('count validator: an integer in [2, MAX_COUNT] equal to the input, or 400', () => {
  fc.assert(
    fc.property(queryValue, (raw) => {
      const n = refusesCleanly(() => parseCount(raw), [400]);
      if (n === undefined) return;
      assert.ok(Number.isSafeInteger(n) && n >= MIN_COUNT && n <= MAX_COUNT);
      assert.equal(n, Number(raw));
    }),
    RUNS,
  );
  fc.assert(
    fc.property(queryValue, (raw) => {
      const n = refusesCleanly(() => parseCount(raw, 20), [400]);
      if (raw === undefined || raw === '') assert.equal(n, 20);
    }),
    RUNS,
  );
});

test('since validator: a safe integer >= 0 equal to the input, or 400', () => {
  fc.assert(
    fc.property(queryValue, (raw) => {
      const n = refusesCleanly(() => parseSince(raw), [400]);
      if (n === undefined) return;
      assert.ok(Number.isSafeInteger(n) && n >= 0);
      assert.equal(n, raw === undefined || raw === '' ? 0 : Number(raw));
    }),
    RUNS,
  );
});

test('city validator: a known slug, or 400 when absent, or 404', () => {
  const known = new Set(['nyc', 'london']);
  fc.assert(
    fc.property(fc.oneof(queryValue, fc.constantFrom('nyc', 'london', 'NYC', 'nyc ', 'nyc/../x')), (raw) => {
      const city = refusesCleanly(() => requireCity(raw, (s) => known.has(s)), [400, 404]);
      if (city !== undefined) assert.ok(known.has(city));
    }),
    RUNS,
  );
});

const deliveryField = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: fc.jsonValue() },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
const deliveryBody = fc.record(
  {
    wallet: deliveryField(hexOf(20)),
    chatId: deliveryField(fc.oneof(fc.integer().map(String), fc.string({ unit: 'grapheme', maxLength: 140 }))),
    citySlug: deliveryField(fc.oneof(fc.constant(''), fc.constant(null), fc.string({ maxLength: 70 }))),
    action: deliveryField(fc.constantFrom('set', 'delete', 'SET', 'remove')),
    signature: deliveryField(hexOf(65)),
    timestamp: deliveryField(fc.oneof(fc.integer(), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER + 2))),
    extra: fc.option(fc.jsonValue(), { nil: undefined }),
  },
  { requiredKeys: [] },
);

test('delivery body validator: a body meeting spec 4.2, or a 400 naming the problem', () => {
  fc.assert(
    fc.property(deliveryBody, (raw) => {
      const body = refusesCleanly(() => parseDeliveryBody(raw as Record<string, unknown>), [400]);
      if (body === undefined) return;
      assert.match(body.wallet, /^0x[0-9a-fA-F]{40}$/);
      assert.ok(body.action === 'set' || body.action === 'delete');
      if (body.action === 'set') assert.ok(body.chatId && !/\s/.test(body.chatId) && body.chatId.length <= 128);
      assert.match(body.signature, /^0x[0-9a-fA-F]+$/);
      assert.ok(Number.isInteger(body.timestamp) && body.timestamp >= 0);
    }),
    RUNS,
  );
});

const range = fc
  .oneof(
    fc
      .tuple(fc.integer({ min: -999, max: 999 }), fc.integer({ min: 0, max: 30 }))
      .filter(([lo, w]) => lo + w <= 999)
      .map(([lo, w]) => ({ lo, hi: lo + w })),
    fc.integer({ min: -999, max: 999 }).map((hi) => ({ lo: Number.NEGATIVE_INFINITY, hi })),
    fc.integer({ min: -999, max: 999 }).map((lo) => ({ lo, hi: Number.POSITIVE_INFINITY })),
  )
  .chain((r) => fc.constantFrom('C' as const, 'F' as const).map((unit) => ({ ...r, unit })));

test('label parser: format -> parse is the identity; typographic variants parse the same', () => {
  fc.assert(
    fc.property(range, (r) => {
      const label = formatLabel(r);
      const parsed = parseLabel(label);
      assert.deepEqual(parsed, { label, ...r });
      const variant = label
        .replace('°', 'º')
        .replace(/^-/, '\u2212')
        .replace(/(\d)-(\d)/, '$1\u2013$2');
      const v = parseLabel(`  ${variant} `);
      assert.ok(v);
      assert.deepEqual({ lo: v.lo, hi: v.hi, unit: v.unit }, r);
    }),
    RUNS,
  );
});

test('label parser: any string gives null or a well-formed range', () => {
  const near = fc
    .tuple(
      fc.string({ maxLength: 4 }),
      fc.integer({ min: -2000, max: 2000 }),
      fc.constantFrom('-', '–', ' - ', ''),
      fc.integer({ min: -2000, max: 2000 }),
      fc.constantFrom('°F', '°C', '°K', 'F', '° c', ''),
      fc.constantFrom('', ' or higher', ' or below', ' or so'),
    )
    .map(([p, a, dash, b, unit, tail]) => `${p}${a}${dash}${b}${unit}${tail}`);
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), near), (s) => {
      const r = parseLabel(s);
      if (r === null) return;
      assert.ok(r.unit === 'C' || r.unit === 'F');
      assert.ok(r.lo <= r.hi);
      assert.ok(Number.isInteger(r.lo) || r.lo === Number.NEGATIVE_INFINITY);
      assert.ok(Number.isInteger(r.hi) || r.hi === Number.POSITIVE_INFINITY);
      assert.ok(Number.isFinite(r.lo) || Number.isFinite(r.hi));
    }),
    RUNS,
  );
});
