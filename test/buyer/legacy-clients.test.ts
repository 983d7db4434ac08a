import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import axios from 'axios';
import { wrapFetchWithPayment } from 'x402-fetch';
import { withPaymentInterceptor } from 'x402-axios';
import { listen, testApp } from '../helpers/app.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';

/**
 * Issue 36 item 5, pinned: the legacy x402 v1 clients (`x402-fetch` 1.2.0, `x402-axios` 0.7.2),
 * used as their READMEs show, read only the v1 body and refuse its `network: "eip155:8453"` (their
 * zod enum knows `base`) before signing: no payment header leaves them. Nothing can serve them
 * without changing what a spec-only client reads: a second `accepts` entry naming `base` is still
 * refused (they parse every entry), and even a body naming only `base` (the spec's network
 * replaced) gets a random nonce on X-Payment, which the spec's binding refuses. docs/discovery.md
 * points their users to @x402/fetch and @x402/axios.
 */
async function setup(t: Parameters<typeof testApp>[0]) {
  const e = testApp(t, { nowMs: Date.now() });
  const sent: string[] = [];
  // Payment headers as the server receives them, whichever client sent them.
  const served = await listen(t, (req) => {
    const h = req.headers.get('x-payment') ?? req.headers.get('payment-signature');
    if (h) sent.push(h);
    return e.app.fetch(req);
  });
  const url = `${served}/v1/subscribe?city=nyc&count=20`;
  // The README's wallet client; its transport is never used (signing is local).
  const wallet = createWalletClient({
    account: privateKeyToAccount(generatePrivateKey()),
    transport: http('http://127.0.0.1:9'),
    chain: base,
  });
  /** Optionally rewrites the 402 body's accepts (the experiments above). */
  const spy =
    (rewrite?: (accepts: any[]) => any[]): typeof fetch =>
    async (input, init) => {
      const res = await fetch(new Request(input, init));
      if (res.status !== 402 || !rewrite) return res;
      const body = (await res.json()) as any;
      body.accepts = rewrite(body.accepts);
      return new Response(JSON.stringify(body), { status: 402, headers: { 'content-type': 'application/json' } });
    };
  return { e, url, wallet, sent, spy };
}

const asBase = (a: any) => ({ ...a, network: 'base' });

test('x402-fetch 1.2.0 refuses the v1 body before signing; an added `base` entry does not help; `base` alone signs a random nonce the spec binding refuses', async (t) => {
  const { url, wallet, sent, spy } = await setup(t);
  await assert.rejects(wrapFetchWithPayment(spy(), wallet as never)(url, { method: 'POST' }), /eip155:8453/);
  await assert.rejects(
    wrapFetchWithPayment(
      spy((accepts) => [...accepts, asBase(accepts[0])]),
      wallet as never,
    )(url, { method: 'POST' }),
    /invalid_enum_value/,
  );
  assert.equal(sent.length, 0, 'no X-Payment left the client');
  const only = await wrapFetchWithPayment(
    spy((accepts) => [asBase(accepts[0])]),
    wallet as never,
  )(url, { method: 'POST' });
  assert.equal(only.status, 402);
  assert.equal(((await only.json()) as any).error, PAYMENT_ERRORS.binding);
  assert.equal(sent.length, 1, 'a random nonce on X-Payment: refused by the spec binding');
});

test('x402-axios 0.7.2 refuses the v1 body before signing', async (t) => {
  const { url, wallet, sent } = await setup(t);
  const api = withPaymentInterceptor(axios.create(), wallet as never);
  await assert.rejects(api.post(url), /eip155:8453/);
  assert.equal(sent.length, 0);
});
