import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSigner, wrapFetchWithPayment } from 'x402-fetch';
import { listen, testApp } from '../helpers/app.ts';

/**
 * What the legacy `x402-fetch` 1.2 (the pre-v2 client, still installed by many agents) does with
 * isocast's 402, tried for real against a running server in mock mode. It reads only the v1 body,
 * parses each `accepts` entry with the legacy `x402` schema (networks by legacy name: `base`,
 * not `eip155:8453`) and signs with a random nonce (x402's createNonce, no hook). Neither can be
 * met without breaking the spec (the network is a constant; the nonce must bind payer, city and
 * count), so it cannot pay isocast, and it never moves money trying. docs/discovery.md says so.
 */
const KEY = `0x${'6d'.repeat(32)}` as const;

test('x402-fetch 1.2 cannot pay isocast: it refuses the eip155:8453 network, and its random nonce is refused', async (t) => {
  // The legacy client signs with the real clock (validAfter = now - 600 s).
  const env = testApp(t, { nowMs: Date.now() });
  const url = await listen(t, env.app.fetch);
  // The package's own signer for Base; signing is local, nothing reaches its RPC.
  const wallet = await createSigner('base', KEY);
  const sent: string[] = [];
  const spy: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const x = req.headers.get('x-payment');
    if (x) sent.push(x);
    return fetch(req);
  };

  // As served: the legacy schema refuses the CAIP-2 network before anything is signed.
  const asServed = await wrapFetchWithPayment(spy, wallet)(`${url}/v1/subscribe?city=nyc&count=2`, {
    method: 'POST',
  }).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(asServed, 'x402-fetch 1.2 paid isocast as served?');
  assert.match(asServed.message, /Invalid enum value/);
  assert.match(asServed.message, /'base'/);
  assert.equal(sent.length, 0);

  // With the network renamed to `base` on the way in (what a v1 facilitator would need), it signs
  // and sends, and the server answers the binding-mismatch 402 before settling anything.
  const renaming: typeof fetch = async (input, init) => {
    const res = await spy(input, init);
    if (res.status !== 402) return res;
    const body = (await res.json()) as any;
    if (body.accepts) body.accepts[0].network = 'base';
    return new Response(JSON.stringify(body), { status: 402, headers: { 'content-type': 'application/json' } });
  };
  const renamed = await wrapFetchWithPayment(renaming, wallet)(`${url}/v1/subscribe?city=nyc&count=2`, {
    method: 'POST',
  });
  const refusal = (await renamed.json()) as any;
  assert.equal(renamed.status, 402);
  assert.equal(refusal.error, 'payment binding mismatch: nonce must bind (payer, city, count)');
  assert.equal(sent.length, 1);
  const payload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString());
  assert.deepEqual([payload.x402Version, payload.scheme, payload.network], [1, 'exact', 'base']);
  assert.equal(env.db.prepare('SELECT count(*) FROM payments').pluck().get(), 0, 'nothing claimed or settled');

  t.diagnostic(`as served: rejected before signing: ${asServed.message.replace(/\s+/g, ' ').slice(0, 160)}`);
  t.diagnostic(`network renamed to base: sent X-Payment with a random nonce -> ${renamed.status} ${refusal.error}`);
});
