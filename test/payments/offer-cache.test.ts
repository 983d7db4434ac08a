import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { withExtensions } from '../../src/x402/v2.ts';
import { inApp } from './buy.ts';

/**
 * The 402 offer is built once per (bundle, route, served salt) and shared: what every buyer of the
 * same bundle is offered at the same moment is the same bytes, and nothing one request adds (a
 * sign-in nonce, a wallet's standing) reaches another's offer.
 */
const v2 = (res: Response) => JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString('utf8'));

test('withExtensions gives the bytes JSON.stringify gives the merged envelope', () => {
  const own = { bazaar: { info: { a: [1, 'x'] } }, 'payment-identifier': { info: { required: false } } };
  const envelope = { x402Version: 2, error: 'e', resource: { url: 'u' }, accepts: [{ amount: '1' }], extensions: own };
  const json = JSON.stringify(envelope);
  const more = { 'sign-in-with-x': { info: { nonce: 'n"\u2028', issuedAt: 'now' } } };
  assert.equal(withExtensions(json, more, own), JSON.stringify({ ...envelope, extensions: { ...own, ...more } }));
  assert.equal(withExtensions(json, {}, own), json);
  // A name the envelope already declares replaces it in place, as a spread would.
  const again = { bazaar: { info: 'other' } };
  assert.equal(withExtensions(json, again, own), JSON.stringify({ ...envelope, extensions: { ...own, ...again } }));
});

test('subscribe 402s are the same bytes until the salt moves; signals 402s keep a fresh sign-in each', async (t) => {
  const e = testApp(t);
  const f = inApp(e.app);
  const sub = () => f('/v1/subscribe?city=nyc&count=20', { method: 'POST' });
  const [a, b] = [await sub(), await sub()];
  assert.equal(a.status, 402);
  assert.equal(a.headers.get('payment-required'), b.headers.get('payment-required'));
  assert.equal(await a.text(), await b.text());

  // Another bundle and another route are other offers.
  const other = await f('/v1/subscribe?city=nyc&count=21', { method: 'POST' });
  assert.notEqual(v2(other).accepts[0].extra.binding.salt, v2(a).accepts[0].extra.binding.salt);

  // The minute moves the salt: a new offer, body and header agreeing.
  e.clock.advance(60_000);
  const c = await sub();
  const body = (await c.json()) as any;
  assert.notEqual(v2(c).accepts[0].extra.binding.salt, v2(a).accepts[0].extra.binding.salt);
  assert.equal(v2(c).accepts[0].extra.binding.salt, body.extra.binding.salt);

  const read = () => f('/v1/signals?city=nyc&count=20');
  const [r1, r2] = [await read(), await read()];
  const [s1, s2] = [v2(r1), v2(r2)];
  assert.notEqual(s1.extensions['sign-in-with-x'].info.nonce, s2.extensions['sign-in-with-x'].info.nonce);
  assert.deepEqual(Object.keys(s1.extensions), ['bazaar', 'payment-identifier', 'sign-in-with-x']);
  assert.deepEqual(s1.accepts, s2.accepts);
  assert.equal(await r1.text(), await r2.text());
});
