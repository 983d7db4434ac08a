import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { loadConfig } from '../../src/config.ts';
import { ERRORS } from '../../src/lib/api-errors.ts';

const RECEIPT_EXPIRED = ERRORS.receipt_expired.message;
import { receiptTypedData, type ReceiptSignedKind } from '../../packages/isocast-client/src/receipt-typed-data.ts';
import { buy, buyerA, buyerB, inApp, type Fetcher } from './buy.ts';

/**
 * Issue 23 item 5: receipt signatures name this deployment's origin (BASE_URL), tokens expire
 * after RECEIPT_TTL_DAYS, and one signed ReceiptRevocation revokes every token of a wallet.
 */
const ORIGIN = 'http://127.0.0.1:8402'; // testApp's BASE_URL
const LOOKALIKE = 'https://isocast-lookalike.example';
const DAY_MS = 86_400_000;

async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  insertSignals(e.db, 'nyc', 3);
  return { ...e, f: inApp(e.app) };
}

const sign = (account: PrivateKeyAccount, kind: ReceiptSignedKind, origin: string, timestamp: number) =>
  account.signTypedData(receiptTypedData(kind, { wallet: account.address, origin, timestamp }));

async function post(f: Fetcher, path: string, body: unknown) {
  const res = await f(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function readWith(f: Fetcher, token: string) {
  const res = await f('/v1/signals?city=nyc&since=0', { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, any>, res };
}

test('a receipt request signed for another origin (a lookalike) is refused here; one for this origin works', async (t) => {
  const { f, clock } = await setup(t);
  await buy(f, buyerA, 'nyc', 20, clock.now());
  const now = Math.floor(clock.now() / 1000);
  const wallet = buyerA.address;
  // What a lookalike collected from the buyer: refused, with the spec's string.
  const foreign = await sign(buyerA, 'ReceiptRequest', LOOKALIKE, now);
  const stolen = await post(f, '/v1/receipts', { wallet, timestamp: now, signature: foreign });
  assert.deepEqual(
    [stolen.status, stolen.body.error, stolen.body.receiptToken],
    [401, 'signature verification failed', undefined],
  );
  // Even when the body claims this server's origin: the server checks its own.
  const claimed = await post(f, '/v1/receipts', { wallet, origin: ORIGIN, timestamp: now, signature: foreign });
  assert.equal(claimed.status, 401);
  // A client that says which origin it signed learns which one this is.
  const told = await post(f, '/v1/receipts', { wallet, origin: LOOKALIKE, timestamp: now, signature: foreign });
  assert.equal(told.body.reason, `signed for origin ${LOOKALIKE}; this server is ${ORIGIN}`);
  // The pre-issue-23 message (no origin field) no longer verifies.
  const legacy = await buyerA.signTypedData({
    domain: { name: 'Isocast', version: '1', chainId: 8453 },
    types: {
      ReceiptRequest: [
        { name: 'wallet', type: 'address' },
        { name: 'timestamp', type: 'uint256' },
      ],
    },
    primaryType: 'ReceiptRequest',
    message: { wallet, timestamp: BigInt(now) },
  });
  assert.equal((await post(f, '/v1/receipts', { wallet, timestamp: now, signature: legacy })).status, 401);
  // Signed for this server's origin: a token.
  const ok = await post(f, '/v1/receipts', {
    wallet,
    origin: ORIGIN,
    timestamp: now,
    signature: await sign(buyerA, 'ReceiptRequest', ORIGIN, now),
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.match(ok.body.receiptToken, /^isr_/);
  assert.equal(ok.body.expiresAt, new Date(clock.now() + 90 * DAY_MS).toISOString());
  assert.equal((await readWith(f, ok.body.receiptToken)).status, 200);
});

test('tokens expire after RECEIPT_TTL_DAYS (default 90) with a 401 that says how to recover; 0 never expires', async (t) => {
  const { f, clock } = await setup(t);
  const bought = await buy(f, buyerA, 'nyc', 20, clock.now());
  const token = bought.body.receiptToken as string;
  clock.advance(90 * DAY_MS - 1_000);
  assert.equal((await readWith(f, token)).status, 200);
  clock.advance(1_000);
  const expired = await readWith(f, token);
  assert.equal(expired.status, 401);
  assert.equal(expired.body.error, RECEIPT_EXPIRED);
  assert.equal(typeof expired.body.disclaimer, 'string');
  assert.match(expired.res.headers.get('www-authenticate') ?? '', /invalid_token/);
  // One signature later the wallet reads again (the entitlement never expired).
  const now = Math.floor(clock.now() / 1000);
  const fresh = await post(f, '/v1/receipts', {
    wallet: buyerA.address,
    timestamp: now,
    signature: await sign(buyerA, 'ReceiptRequest', ORIGIN, now),
  });
  assert.equal((await readWith(f, fresh.body.receiptToken)).body.paid_through, 23);

  const short = await setup(t, { RECEIPT_TTL_DAYS: '1' });
  const b2 = await buy(short.f, buyerB, 'nyc', 2, short.clock.now());
  short.clock.advance(DAY_MS);
  assert.equal((await readWith(short.f, b2.body.receiptToken)).status, 401);

  const forever = await setup(t, { RECEIPT_TTL_DAYS: '0' });
  const b3 = await buy(forever.f, buyerB, 'nyc', 2, forever.clock.now());
  forever.clock.advance(3_650 * DAY_MS);
  assert.equal((await readWith(forever.f, b3.body.receiptToken)).status, 200);
});

test('RECEIPT_TTL_DAYS is validated like the other day counts', () => {
  assert.equal(loadConfig({ DATA_DIR: '/tmp/x' }).RECEIPT_TTL_DAYS, 90);
  assert.throws(() => loadConfig({ DATA_DIR: '/tmp/x', RECEIPT_TTL_DAYS: '-1' }), /RECEIPT_TTL_DAYS/);
  assert.throws(() => loadConfig({ DATA_DIR: '/tmp/x', RECEIPT_TTL_DAYS: 'ninety' }), /RECEIPT_TTL_DAYS/);
});

test('one signed ReceiptRevocation revokes every token of the wallet, once; other wallets keep theirs', async (t) => {
  const { f, db, clock } = await setup(t);
  const t1 = (await buy(f, buyerA, 'nyc', 20, clock.now())).body.receiptToken as string;
  const t2 = (await buy(f, buyerA, 'miami', 2, clock.now())).body.receiptToken as string;
  const other = (await buy(f, buyerB, 'nyc', 2, clock.now())).body.receiptToken as string;
  const now = Math.floor(clock.now() / 1000);
  const wallet = buyerA.address;

  // Refused: another origin, a ReceiptRequest signature (another type), stale, another wallet's key.
  const refusals = [
    { wallet, timestamp: now, signature: await sign(buyerA, 'ReceiptRevocation', LOOKALIKE, now) },
    { wallet, timestamp: now, signature: await sign(buyerA, 'ReceiptRequest', ORIGIN, now) },
    { wallet, timestamp: now - 601, signature: await sign(buyerA, 'ReceiptRevocation', ORIGIN, now - 601) },
    { wallet, timestamp: now, signature: await sign(buyerB, 'ReceiptRevocation', ORIGIN, now) },
  ];
  for (const body of refusals) {
    const r = await post(f, '/v1/receipts/revoke', body);
    assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.ok(['signature verification failed', 'stale timestamp'].includes(r.body.error), r.body.error);
  }
  assert.equal((await readWith(f, t1)).status, 200, 'nothing revoked by a refused request');

  const signature = await sign(buyerA, 'ReceiptRevocation', ORIGIN, now);
  const revoked = await post(f, '/v1/receipts/revoke', { wallet, timestamp: now, signature });
  assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
  assert.deepEqual([revoked.body.ok, revoked.body.wallet, revoked.body.revoked], [true, wallet.toLowerCase(), 2]);
  for (const token of [t1, t2]) {
    const r = await readWith(f, token);
    assert.equal(r.status, 402);
    assert.equal(r.body.signals, undefined);
  }
  assert.equal((await readWith(f, other)).status, 200, "another wallet's token is untouched");

  // Issue 35 item 5: a ReceiptRequest signed at or before the revocation (a copy taken before it)
  // mints nothing; one dated far ahead is refused as stale.
  for (const at of [now, now - 5]) {
    const early = await post(f, '/v1/receipts', {
      wallet,
      timestamp: at,
      signature: await sign(buyerA, 'ReceiptRequest', ORIGIN, at),
    });
    assert.deepEqual([early.status, early.body.error], [401, 'signature verification failed'], `signed at ${at - now}`);
    assert.match(early.body.reason, /revocation/);
  }
  for (const ahead of [590, 61]) {
    const future = await post(f, '/v1/receipts', {
      wallet,
      timestamp: now + ahead,
      signature: await sign(buyerA, 'ReceiptRequest', ORIGIN, now + ahead),
    });
    assert.deepEqual([future.status, future.body.error], [401, 'stale timestamp'], `${ahead} s ahead`);
  }
  // A new token signed after the revocation works, and replaying the revocation cannot revoke it.
  clock.advance(1_000);
  const fresh = await post(f, '/v1/receipts', {
    wallet,
    timestamp: now + 1,
    signature: await sign(buyerA, 'ReceiptRequest', ORIGIN, now + 1),
  });
  assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
  const replay = await post(f, '/v1/receipts/revoke', { wallet, timestamp: now, signature });
  assert.deepEqual([replay.status, replay.body.error], [401, 'signature already used']);
  assert.equal((await readWith(f, fresh.body.receiptToken)).status, 200);
  assert.equal(db.prepare('SELECT count(*) FROM receipt_revocations').pluck().get(), 1);
});
