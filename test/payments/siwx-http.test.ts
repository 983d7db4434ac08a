import { test } from 'node:test';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createSIWxPayload, encodeSIWxHeader, type SIWxExtension } from '@x402/extensions/sign-in-with-x';
import { listen, testApp, type TestEnv } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { crossings } from '../helpers/crossings.ts';
import { MOCK_PAY_TO } from '../../src/payments/pay-to.ts';
import { IsocastExactScheme, registerIsocast } from '../../packages/isocast-client/src/index.ts';
import { isocastSignIn, signInHeader } from '../../packages/isocast-client/src/siwx.ts';

/**
 * Sign in with the wallet that paid, end to end on 127.0.0.1 (issue 28 item 1): stock
 * `@x402/fetch` with isocast's scheme and `@x402/extensions`' SIWX client extension buys once,
 * then reads again with no payment and no token; a replayed header, another server's sign-in,
 * an expired one and a wallet that paid nothing are refused.
 */
const buyer = privateKeyToAccount(`0x${'5a'.repeat(32)}`);
const stranger = privateKeyToAccount(`0x${'6b'.repeat(32)}`);

/** A server whose BASE_URL is its own listening address, as a deployment's is. */
async function served(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  let app: TestEnv['app'] | null = null;
  const base = await listen(t, (req) => app!.fetch(req));
  const e = testApp(t, { env: { BASE_URL: base, ...env } });
  app = e.app;
  return { ...e, base };
}

type Line = { line: string; siwx: string | null };

/** fetch that records each request and its answer as one line (header names, never values). */
function recorder(lines: Line[]): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const u = new URL(req.url);
    const sent = ['sign-in-with-x', 'payment-signature', 'x-payment', 'authorization'].filter((h) =>
      req.headers.has(h),
    );
    const res = await fetch(req);
    const got = ['payment-required', 'payment-response', 'x-receipt-token'].filter((h) => res.headers.has(h));
    lines.push({
      line: `${req.method} ${u.pathname}${u.search} [${sent.join(', ') || 'no credential'}] -> ${res.status} [${got.join(', ')}]`,
      siwx: req.headers.get('sign-in-with-x'),
    });
    return res;
  };
}

function stockClient(env: { clock: { now(): number } }, lines: Line[]) {
  const client = new x402Client();
  registerIsocast(client, new IsocastExactScheme(buyer, { payTo: MOCK_PAY_TO, now: () => env.clock.now() }));
  client.registerExtension(isocastSignIn(buyer));
  return wrapFetchWithPayment(recorder(lines), client);
}

test('@x402/fetch with the SIWX extension buys once, then re-reads with no payment and no token', async (t) => {
  const env = await served(t);
  insertSignals(env.db, 'london', 4);
  const lines: Line[] = [];
  const payFetch = stockClient(env, lines);
  const url = `${env.base}/v1/signals?city=london&count=20`;

  // The 402 declares the extension, bound to this server.
  const challenge = await fetch(url);
  assert.equal(challenge.status, 402);
  const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
  const declared = required.extensions?.['sign-in-with-x'] as SIWxExtension;
  assert.equal(declared.info.domain, new URL(env.base).host);
  assert.equal(declared.info.uri, url);
  assert.match(declared.info.nonce, /^[0-9a-f]{32}$/);
  assert.equal(Date.parse(declared.info.expirationTime!) - Date.parse(declared.info.issuedAt), 300_000);
  assert.deepEqual(declared.supportedChains, [{ chainId: 'eip155:8453', type: 'eip191' }]);
  assert.equal(
    ((await challenge.json()) as Record<string, unknown>).extensions,
    undefined,
    'the v1 body stays the spec',
  );

  // First read: the sign-in finds nothing bought (402), so the client pays.
  const first = await payFetch(url);
  const firstPage = (await first.json()) as Record<string, any>;
  assert.equal(first.status, 200, JSON.stringify(firstPage));
  assert.deepEqual(
    firstPage.signals.map((s: { seq: number }) => s.seq),
    [1, 2, 3, 4],
  );
  assert.ok(first.headers.get('payment-response'));
  const buyLines = lines.splice(0);

  // Second read: signed in, no payment, no token.
  insertSignals(env.db, 'london', 2);
  const again = await payFetch(`${env.base}/v1/signals?city=london&count=20&since=4`);
  const page = (await again.json()) as Record<string, any>;
  assert.equal(again.status, 200, JSON.stringify(page));
  assert.deepEqual(
    page.signals.map((s: { seq: number }) => s.seq),
    [5, 6],
  );
  assert.equal(page.paid_through, 24);
  assert.equal(again.headers.get('payment-response'), null);
  const readLines = lines.splice(0);
  t.diagnostic(`buy:\n${buyLines.map((l) => l.line).join('\n')}`);
  t.diagnostic(`re-read:\n${readLines.map((l) => l.line).join('\n')}`);
  assert.deepEqual(
    readLines.map((l) => l.line.replace(/ \[[^\]]*\] -> /, ' -> ')),
    [
      `GET /v1/signals?city=london&count=20&since=4 -> 402 [payment-required]`,
      `GET /v1/signals?city=london&count=20&since=4 -> 200 []`,
    ],
  );
  assert.ok(readLines[1]!.line.includes('[sign-in-with-x]'), readLines[1]!.line);
  const count = env.db.prepare('SELECT count(*) AS n FROM payments').get() as { n: number };
  assert.equal(count.n, 1, 'one payment: the re-read paid nothing');

  // The same header again: its nonce is spent.
  const replay = await fetch(`${env.base}/v1/signals?city=london&count=20&since=4`, {
    headers: { 'sign-in-with-x': readLines[1]!.siwx! },
  });
  const replayBody = (await replay.json()) as Record<string, any>;
  assert.equal(replay.status, 401);
  assert.equal(replayBody.error, 'sign-in-with-x nonce already used; sign the one in a fresh 402');
  assert.equal(replayBody.code, 'invalid_siwx_nonce');
  assert.ok(replayBody.disclaimer);
});

test('a sign-in made for another server, an expired one and a forged one are refused with 401', async (t) => {
  const env = await served(t);
  insertSignals(env.db, 'nyc', 2);
  env.db
    .prepare(
      'INSERT INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
    .run(buyer.address.toLowerCase(), 'nyc', 20, 20, env.clock.now());
  const url = `${env.base}/v1/signals?city=nyc`;
  const declared = async () => {
    const res = await fetch(url);
    return (
      decodePaymentRequiredHeader(res.headers.get('payment-required')!).extensions!['sign-in-with-x'] as SIWxExtension
    ).info;
  };
  const sign = async (info: SIWxExtension['info'], requestUrl: string, signer = buyer) =>
    encodeSIWxHeader(await createSIWxPayload({ ...info, chainId: 'eip155:8453', type: 'eip191' }, signer, requestUrl));
  const read = async (header: string) => {
    const res = await fetch(url, { headers: { 'sign-in-with-x': header } });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  // A lookalike's 402 names its own domain; the signature it collects is no good here.
  const info = await declared();
  const elsewhere = await sign(
    { ...info, domain: 'isocast.example', uri: 'https://isocast.example/v1/signals?city=nyc', resources: undefined },
    'https://isocast.example/v1/signals?city=nyc',
  );
  const other = await read(elsewhere);
  assert.equal(other.status, 401);
  assert.equal(other.body.error, 'sign-in-with-x is for another server');
  assert.equal(other.body.code, 'invalid_siwx_domain_mismatch');
  assert.match(other.body.reason, new RegExp(`this server is ${env.base}`));
  assert.ok(other.body.disclaimer);

  // Expired: the clock passes the declared expirationTime.
  const late = await sign(await declared(), url);
  env.clock.advance(301_000);
  const expired = await read(late);
  assert.deepEqual([expired.status, expired.body.error], [401, 'sign-in-with-x expired; sign the one in a fresh 402']);

  // Someone else's signature over the buyer's address.
  const forged = JSON.parse(Buffer.from(await sign(await declared(), url, stranger), 'base64').toString());
  forged.address = buyer.address;
  const bad = await read(Buffer.from(JSON.stringify(forged)).toString('base64'));
  assert.deepEqual([bad.status, bad.body.error], [401, 'sign-in-with-x signature verification failed']);

  // Not base64 JSON of a sign-in.
  const junk = await read('not a sign-in');
  assert.deepEqual([junk.status, junk.body.error], [401, 'SIGN-IN-WITH-X header malformed']);

  // The buyer's own fresh sign-in reads (the refusals above consumed nothing of it).
  const ok = await read(await sign(await declared(), url));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(
    ok.body.signals.map((s: { seq: number }) => s.seq),
    [1, 2],
  );
});

test('a wallet with no entitlement signs in and gets the 402 with a fresh sign-in; a sanctioned one gets 403', async (t) => {
  const env = await served(t, { OFAC_EXTRA: stranger.address });
  const url = `${env.base}/v1/signals?city=nyc&count=20`;
  const header = async (signer = buyer) => {
    const res = await fetch(url);
    return (await signInHeader(res.headers.get('payment-required')!, signer, url))!;
  };
  const first = await header();
  const res = await fetch(url, { headers: { 'sign-in-with-x': first } });
  const body = (await res.json()) as Record<string, any>;
  assert.equal(res.status, 402);
  assert.deepEqual([body.error, body.paid_through], ['paid signals exhausted; buy more to continue', 0]);
  const next = decodePaymentRequiredHeader(res.headers.get('payment-required')!).extensions![
    'sign-in-with-x'
  ] as SIWxExtension;
  assert.notEqual(next.info.nonce, JSON.parse(Buffer.from(first, 'base64').toString()).nonce, 'a new nonce');

  const listed = await fetch(url, { headers: { 'sign-in-with-x': await header(stranger) } });
  assert.equal(listed.status, 403);
  assert.equal(((await listed.json()) as { error: string }).error, 'wallet is sanctioned; payment refused');

  // signInHeader refuses to sign a 402 whose sign-in names another origin than the one it came from.
  const res2 = await fetch(url);
  await assert.rejects(
    signInHeader(res2.headers.get('payment-required')!, buyer, 'https://lookalike.example/v1/signals'),
    /does not match response origin/,
  );
});

test('a signed-in read with wait is held until an entitled signal commits, as a bearer read is', async (t) => {
  const env = await served(t);
  const feed = crossings(env.stores.signals, env.deps.catalog.get('nyc')!, env.clock.now());
  feed.next(); // latest 1
  env.db
    .prepare(
      'INSERT INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
    .run(buyer.address.toLowerCase(), 'nyc', 4, 4, env.clock.now());
  const url = `${env.base}/v1/signals?city=nyc&since=1&wait=20`;
  const header = (await signInHeader((await fetch(url)).headers.get('payment-required')!, buyer, url))!;
  const notifier = env.stores.notifier;
  const held = fetch(url, { headers: { 'sign-in-with-x': header } });
  for (let i = 0; i < 500 && notifier.waiting() === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(notifier.waiting(), 1, 'held');
  feed.next(); // seq 2
  const res = await held;
  const page = (await res.json()) as Record<string, any>;
  assert.equal(res.status, 200, JSON.stringify(page));
  assert.deepEqual(
    page.signals.map((s: { seq: number }) => s.seq),
    [2],
  );
});
