import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { tempDir, testApp } from '../helpers/app.ts';
import { FAKE_USDC, startFakeChain } from '../fakes/chain-rpc.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { CDP_FACILITATOR_URL } from '../../src/payments/settlers/cdp-key.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buy, buyerA, inApp } from './buy.ts';

/**
 * Issue 24 item 6: Coinbase's facilitator wants a fresh JWT per request. A local fake verifies
 * each one with jose against the key's public half and checks the claims CDP checks: iss, sub,
 * aud, the `uris` claim naming this request's method, host and path, a lifetime of at most 120 s,
 * and the header's kid and nonce.
 */
const KEY_ID = 'organizations/3f1c/apiKeys/9a7e-test';
const PAY_TO = '0x00000000000000000000000000000000000000aa';

function ed25519Secret(): { secret: string; pub: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const raw = Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]);
  return { secret: raw.toString('base64'), pub: publicKey };
}

function ecSecret(): { secret: string; pub: KeyObject } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
  return { secret: pem, pub: createPublicKey(pem) };
}

type Seen = { method: string; path: string; ok: boolean; problem?: string; nonce?: string; lifetime?: number };

/** A facilitator answering only requests whose CDP JWT verifies; 401 otherwise, as CDP does. */
async function fakeCdp(
  t: Parameters<typeof testApp>[0],
  pub: KeyObject,
  chain: Awaited<ReturnType<typeof startFakeChain>>,
) {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const entry: Seen = { method: req.method!, path: req.url!, ok: false };
    seen.push(entry);
    try {
      const { payload, protectedHeader } = await jwtVerify(token, pub, {
        issuer: 'cdp',
        subject: KEY_ID,
        audience: 'cdp_service',
        algorithms: ['EdDSA', 'ES256'],
      });
      const header = decodeProtectedHeader(token);
      assert.equal(protectedHeader.kid, KEY_ID);
      assert.match(String(header.nonce), /^[0-9a-f]{32}$/);
      assert.deepEqual(payload.uris, [`${req.method} ${req.headers.host}${req.url}`]);
      const lifetime = payload.exp! - payload.nbf!;
      assert.ok(lifetime > 0 && lifetime <= 120, `lifetime ${lifetime}`);
      assert.ok(payload.exp! - Math.floor(Date.now() / 1000) <= 120);
      Object.assign(entry, { ok: true, nonce: header.nonce, lifetime });
    } catch (err) {
      entry.problem = (err as Error).message;
      return send(401, { errorType: 'unauthorized', errorMessage: 'Unauthorized' });
    }
    if (req.method === 'GET' && req.url === '/platform/v2/x402/supported')
      return send(200, { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }] });
    if (req.method === 'POST' && req.url === '/platform/v2/x402/settle') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const a = body.paymentPayload.payload.authorization;
      const { txHash } = chain.use(a.from, a.nonce, { amountMicro: Number(a.value), to: a.to });
      return send(200, { success: true, transaction: txHash, network: 'eip155:8453', payer: a.from });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/platform/v2/x402`, seen };
}

for (const [kind, make] of [
  ['Ed25519 (EdDSA)', ed25519Secret],
  ['EC P-256 PEM (ES256)', ecSecret],
] as const) {
  test(`CDP facilitator with a ${kind} key: every request carries its own JWT for its method, host and path`, async (t) => {
    const chain = await startFakeChain();
    t.after(() => chain.close());
    const key = make();
    const fac = await fakeCdp(t, key.pub, chain);
    const secretFile = join(tempDir(t), 'cdp-secret');
    writeFileSync(secretFile, `${key.secret}\n`);
    const env = {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      PAY_TO,
      FACILITATOR_URL: fac.url,
      CDP_API_KEY_ID: KEY_ID,
      CDP_API_KEY_SECRET_FILE: secretFile,
      RPC_URL: chain.url,
      USDC_ADDRESS: FAKE_USDC,
      OFAC_REQUIRED: 'false',
    };
    const e = testApp(t, { env, deps: {} });
    const settler = settlerFromConfig(e.config);
    t.after(() => settler.close?.());
    const f = inApp((await import('../../src/app.ts')).createApp({ ...e.deps, settler }));
    const first = await buy(f, buyerA, 'nyc', 2, e.clock.now(), { expect: { usdc: FAKE_USDC } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const second = await buy(f, buyerA, 'nyc', 2, e.clock.now(), { expect: { usdc: FAKE_USDC } });
    assert.equal(second.status, 200);
    assert.deepEqual(
      fac.seen.map((s) => [s.method, s.path, s.ok, s.problem]),
      [
        ['GET', '/platform/v2/x402/supported', true, undefined],
        ['POST', '/platform/v2/x402/settle', true, undefined],
        ['POST', '/platform/v2/x402/settle', true, undefined],
      ],
    );
    assert.equal(new Set(fac.seen.map((s) => s.nonce)).size, 3, 'a fresh nonce per request');
    assert.ok(fac.seen.every((s) => s.lifetime === 120));
  });
}

test('a JWT from the wrong key is refused (401): the purchase is 402 not charged, with nothing moved', async (t) => {
  const chain = await startFakeChain();
  t.after(() => chain.close());
  const fac = await fakeCdp(t, ed25519Secret().pub, chain);
  const e = testApp(t, {
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      PAY_TO,
      FACILITATOR_URL: fac.url,
      CDP_API_KEY_ID: KEY_ID,
      CDP_API_KEY_SECRET: ed25519Secret().secret,
      RPC_URL: chain.url,
      USDC_ADDRESS: FAKE_USDC,
      OFAC_REQUIRED: 'false',
    },
  });
  const settler = settlerFromConfig(e.config);
  t.after(() => settler.close?.());
  const f = inApp((await import('../../src/app.ts')).createApp({ ...e.deps, settler }));
  const r = await buy(f, buyerA, 'nyc', 2, e.clock.now(), { expect: { usdc: FAKE_USDC } });
  assert.equal(r.status, 402, JSON.stringify(r.body));
  assert.equal(r.body.error, PAYMENT_ERRORS.settle);
  assert.equal(r.body.reason, 'facilitator refused /settle (HTTP 401): Unauthorized');
  assert.equal(chain.used.size, 0);
});

test('CDP settings: FACILITATOR_URL defaults to CDP, the key comes as a pair, never beside FACILITATOR_AUTH, and must be a key', () => {
  const base = { PAYMENT_MODE: 'live', FEED: 'live', PAY_TO, OFAC_REQUIRED: 'false' };
  const { secret } = ed25519Secret();
  assert.equal(
    loadConfig({ ...base, CDP_API_KEY_ID: KEY_ID, CDP_API_KEY_SECRET: secret }).FACILITATOR_URL,
    CDP_FACILITATOR_URL,
  );
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
      return [];
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems;
    }
  };
  assert.deepEqual(problems({ CDP_API_KEY_ID: KEY_ID }), [
    'CDP_API_KEY_SECRET: required with CDP_API_KEY_ID (or CDP_API_KEY_SECRET_FILE)',
  ]);
  assert.deepEqual(problems({ CDP_API_KEY_SECRET: secret, FACILITATOR_URL: 'https://f.example' }), [
    'CDP_API_KEY_ID: required with CDP_API_KEY_SECRET',
  ]);
  assert.deepEqual(problems({ CDP_API_KEY_ID: KEY_ID, CDP_API_KEY_SECRET: secret, FACILITATOR_AUTH: 'Bearer x' }), [
    'FACILITATOR_AUTH: not used with a CDP API key (each request carries its own JWT); set one of them',
  ]);
  assert.deepEqual(problems({ CDP_API_KEY_ID: KEY_ID, CDP_API_KEY_SECRET: 'not-a-key' }), [
    'CDP_API_KEY_SECRET: must be an Ed25519 key (base64 of 64 bytes) or an EC P-256 key in PEM, as the CDP portal issues',
  ]);
  assert.deepEqual(problems({ CDP_API_KEY_ID: KEY_ID, CDP_API_KEY_SECRET: secret, FACILITATOR_URL: '' }), []);
});
