import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { bindingNonce } from '../../src/payments/binding.ts';
import { RECEIPT_REQUEST_DOMAIN, RECEIPT_REQUEST_TYPES } from '../../packages/isocast-client/src/receipt-typed-data.ts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { buy, buyerA, buyerB, challenge, inApp, signFor, subscribeWith, tamper, type Fetcher } from './buy.ts';
import { createStores } from '../../src/stores.ts';

/**
 * Issue 12 over HTTP: replays answer state and never mint tokens, a lost token comes back through
 * POST /v1/receipts, the same bundle can be bought twice at once, HEAD and a purchase that buys
 * nothing readable never move money, and the sample never gives away the latest signal.
 */
async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  return { ...e, f: inApp(e.app) };
}

const count = (db: ReturnType<typeof testApp>['db'], sql: string) => db.prepare(sql).pluck().get() as number;

async function receiptRequest(f: Fetcher, body: unknown) {
  const res = await f('/v1/receipts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const signReceipt = (account: typeof buyerA, wallet: string, timestamp: number) =>
  account.signTypedData({
    domain: RECEIPT_REQUEST_DOMAIN,
    types: RECEIPT_REQUEST_TYPES,
    primaryType: 'ReceiptRequest',
    message: { wallet: wallet as Hex, origin: 'http://127.0.0.1:8402', timestamp: BigInt(timestamp) },
  });

test('a replay after validBefore is idempotent, and a replay never carries a receipt token', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 3);
  const first = await buy(f, buyerA, 'nyc', 20, clock.now());
  assert.equal(first.status, 200);
  assert.match(first.body.receiptToken, /^isr_/);
  const replay = await subscribeWith(f, first.payment.xPayment, 'nyc', 20);
  assert.equal(replay.status, 200);
  assert.equal(replay.body.idempotent, true);
  assert.equal(replay.body.receiptToken, undefined);
  assert.equal(replay.body.txHash, first.body.txHash);
  // Long after the authorization expired: still its state, never "not charged".
  clock.advance(3_600_000);
  const late = await subscribeWith(f, first.payment.xPayment, 'nyc', 20);
  assert.equal(late.status, 200, JSON.stringify(late.body));
  assert.equal(late.body.idempotent, true);
  assert.equal(late.body.paidThroughSeq, 23);
  assert.equal(late.body.receiptToken, undefined);
  // Many replays: no receipt rows, no ceiling change.
  await Promise.all(Array.from({ length: 50 }, () => subscribeWith(f, first.payment.xPayment, 'nyc', 20)));
  assert.equal(count(db, 'SELECT count(*) FROM receipts'), 1);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 23,
    totalPaidSignals: 20,
  });
  // An inline replay on GET /v1/signals: the state as a 402 (no rows), no X-Receipt-Token.
  const inline = await f('/v1/signals?city=nyc&count=20&since=0', { headers: { 'x-payment': first.payment.xPayment } });
  assert.equal(inline.status, 402);
  assert.equal(((await inline.json()) as Record<string, any>).idempotent, true);
  assert.equal(inline.headers.get('x-receipt-token'), null);
  assert.equal(count(db, 'SELECT count(*) FROM receipts'), 1);
});

test('POST /v1/receipts: one token per signature; refuses its own replay, a stale or foreign signature, and a wallet without purchases', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 3);
  await buy(f, buyerA, 'nyc', 20, clock.now());
  await buy(f, buyerA, 'miami', 2, clock.now());
  const now = Math.floor(clock.now() / 1000);
  const wallet = buyerA.address;

  const signature = await signReceipt(buyerA, wallet, now);
  const ok = await receiptRequest(f, { wallet, timestamp: now, signature });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.ok, true);
  assert.equal(ok.body.wallet, wallet.toLowerCase());
  assert.deepEqual(ok.body.cities, [
    { city: 'miami', paidThroughSeq: 2 },
    { city: 'nyc', paidThroughSeq: 23 },
  ]);
  assert.equal(typeof ok.body.disclaimer, 'string');
  assert.equal(createStores(db).receipts.walletFor(ok.body.receiptToken), wallet.toLowerCase());
  const read = await f('/v1/signals?city=nyc&since=0', {
    headers: { authorization: `Bearer ${ok.body.receiptToken}` },
  });
  assert.equal(read.status, 200);

  // The same signed request again (even re-encoded in mixed case): used once.
  assert.deepEqual(
    await receiptRequest(f, { wallet, timestamp: now, signature }).then((r) => [r.status, r.body.error]),
    [401, 'signature already used'],
  );
  assert.deepEqual(
    await receiptRequest(f, {
      wallet: wallet.toLowerCase(),
      timestamp: now,
      signature: signature.toUpperCase().replace('0X', '0x'),
    }).then((r) => [r.status, r.body.error]),
    [401, 'signature already used'],
  );
  // Stale either way.
  for (const ts of [now - 601, now + 601]) {
    const r = await receiptRequest(f, { wallet, timestamp: ts, signature: await signReceipt(buyerA, wallet, ts) });
    assert.deepEqual([r.status, r.body.error], [401, 'stale timestamp']);
  }
  // B signs for A's wallet: refused.
  const foreign = await receiptRequest(f, {
    wallet,
    timestamp: now + 1,
    signature: await signReceipt(buyerB, wallet, now + 1),
  });
  assert.deepEqual([foreign.status, foreign.body.error], [401, 'signature verification failed']);
  // B signs for itself but bought nothing.
  const none = await receiptRequest(f, {
    wallet: buyerB.address,
    timestamp: now,
    signature: await signReceipt(buyerB, buyerB.address, now),
  });
  assert.deepEqual([none.status, none.body.error], [404, 'no purchases for this wallet']);
  // Bad input: 400.
  for (const [body, error] of [
    [{ timestamp: now, signature }, 'wallet is required'],
    [{ wallet: 'nope', timestamp: now, signature }, 'invalid wallet: must be a 0x-prefixed 20-byte hex address'],
    [{ wallet, timestamp: 'soon', signature }, 'invalid timestamp: must be an integer number of unix seconds'],
    [{ wallet, timestamp: now }, 'signature is required'],
  ] as const) {
    const r = await receiptRequest(f, body);
    assert.deepEqual([r.status, r.body.error], [400, error]);
  }
  // A second, fresh signature mints a second token; the first keeps working.
  const again = await receiptRequest(f, {
    wallet,
    timestamp: now + 2,
    signature: await signReceipt(buyerA, wallet, now + 2),
  });
  assert.equal(again.status, 200);
  assert.notEqual(again.body.receiptToken, ok.body.receiptToken);
  assert.equal(createStores(db).receipts.walletFor(ok.body.receiptToken), wallet.toLowerCase());
});

test('the same bundle bought twice in one second: two nonces, two settlements, the ceiling moves twice', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 5);
  const started = performance.now();
  const one = await buy(f, buyerA, 'nyc', 20, clock.now());
  const firstMs = performance.now() - started;
  const secondStart = performance.now();
  const two = await buy(f, buyerA, 'nyc', 20, clock.now());
  const repeatMs = performance.now() - secondStart;
  assert.equal(one.status, 200);
  assert.equal(two.status, 200);
  assert.notEqual(one.payment.nonce, two.payment.nonce);
  assert.equal(two.body.idempotent, false);
  assert.equal(one.body.paidThroughSeq, 25);
  assert.equal(two.body.paidThroughSeq, 45);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 45,
    totalPaidSignals: 40,
  });
  assert.equal(count(db, `SELECT count(*) FROM payments WHERE status = 'applied'`), 2);
  t.diagnostic(
    `repeat purchase of the same bundle end to end (402, sign, pay, 200): first ${firstMs.toFixed(1)} ms, repeat ${repeatMs.toFixed(1)} ms`,
  );
});

test("salts: a 402 serves the bundle's salt until a purchase bound to it settles; an echo is optional but must be a served salt", async (t) => {
  const { f, db, clock } = await setup(t);
  const [c1, c2, c3] = [
    await challenge(f, 'nyc', 2),
    await challenge(f, 'nyc', 2),
    await challenge(f, 'nyc', 3),
  ] as any[];
  const b1 = c1.accepts[0].extra.binding;
  assert.equal(b1.salt, c2.accepts[0].extra.binding.salt, 'nothing bought yet: the same salt');
  assert.notEqual(b1.salt, c3.accepts[0].extra.binding.salt, 'another bundle, another salt');
  assert.equal(b1.saltEcho, 'payload.salt');
  assert.deepEqual(c1.extra.binding, b1);
  assert.deepEqual(Object.keys(b1).sort(), ['citySlug', 'count', 'formula', 'salt', 'saltEcho']);

  // A forged salt, echoed and bound correctly by the client: never served, refused before settling.
  const forgedBody = structuredClone(c1);
  forgedBody.accepts[0].extra.binding.salt = `0x${'11'.repeat(32)}`;
  const forged = await payFor402(forgedBody, buyerA, { nowMs: clock.now() });
  const r = await subscribeWith(f, forged.xPayment, 'nyc', 2);
  assert.deepEqual([r.status, r.body.error], [402, PAYMENT_ERRORS.binding]);
  // Another bundle's salt echoed back: not served for nyc x 2.
  const swappedBundle = tamper((await payFor402(c1, buyerA, { nowMs: clock.now() })).xPayment, (j) => {
    j.payload.salt = c3.accepts[0].extra.binding.salt;
  });
  assert.equal((await subscribeWith(f, swappedBundle, 'nyc', 2)).body.error, PAYMENT_ERRORS.binding);

  // Buyer B settles: the step moves, and the next 402 serves a new salt.
  assert.equal((await buy(f, buyerB, 'nyc', 2, clock.now())).status, 200);
  const c4 = (await challenge(f, 'nyc', 2)) as any;
  assert.notEqual(c4.extra.binding.salt, b1.salt);
  // A served salt echoed that the nonce is not bound to (bound to c4's, echoing c1's).
  const swapped = tamper((await payFor402(c4, buyerA, { nowMs: clock.now() })).xPayment, (j) => {
    j.payload.salt = b1.salt;
  });
  assert.equal((await subscribeWith(f, swapped, 'nyc', 2)).body.error, PAYMENT_ERRORS.binding);

  // A client that does not echo: the plain x402 v1 payload binds to the salt on its own.
  const plainBody = structuredClone(c1);
  delete plainBody.accepts[0].extra.binding.saltEcho;
  delete plainBody.extra.binding.saltEcho;
  const plain = await payFor402(plainBody, buyerA, { nowMs: clock.now() });
  assert.equal(plain.nonce, bindingNonce({ payer: buyerA.address, city: 'nyc', count: 2, salt: b1.salt }));
  assert.equal(JSON.parse(Buffer.from(plain.xPayment, 'base64').toString()).payload.salt, undefined);
  assert.equal((await subscribeWith(f, plain.xPayment, 'nyc', 2)).status, 200);
  assert.equal(count(db, `SELECT count(*) FROM payments WHERE status = 'applied'`), 2);
});

test('inline payment with a cursor below count always buys something readable: settled without the exhaustion lookup', async (t) => {
  const { f, clock } = await setup(t);
  // No signals yet: the new ceiling is 0 + 2 = 2, above since=1.
  const p = await signFor(f, buyerA, 'nyc', 2, clock.now());
  const res = await f('/v1/signals?city=nyc&count=2&since=1', { headers: { 'x-payment': p.xPayment } });
  assert.equal(res.status, 200);
  const page = (await res.json()) as Record<string, any>;
  assert.deepEqual([page.signals.length, page.paid_through, page.latest, page.more], [0, 2, 0, false]);
});

test('inline payment on GET /v1/signals: a purchase that would buy nothing readable is refused before settling', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 3);
  const p = await signFor(f, buyerA, 'nyc', 2, clock.now());
  // Ceiling after the purchase would be 3 + 2 = 5: since=5 buys nothing.
  const res = await f('/v1/signals?city=nyc&count=2&since=5', { headers: { 'x-payment': p.xPayment } });
  assert.equal(res.status, 402);
  const body = (await res.json()) as Record<string, any>;
  assert.equal(body.error, 'paid signals exhausted; buy more to continue');
  assert.equal(body.paid_through, 0);
  assert.equal(body.latest, 3);
  assert.equal(count(db, 'SELECT count(*) FROM payments'), 0, 'nothing claimed, nothing settled');
  // since=4 is below the new ceiling: settled, and always 200 (an empty page: seq 5 is not out yet).
  const ok = await f('/v1/signals?city=nyc&count=2&since=4', { headers: { 'x-payment': p.xPayment } });
  assert.equal(ok.status, 200);
  const page = (await ok.json()) as Record<string, any>;
  assert.deepEqual([page.signals.length, page.paid_through, page.latest, page.more], [0, 5, 3, false]);
  assert.match(ok.headers.get('x-receipt-token') ?? '', /^isr_/);
  // The same header again with a since past the ceiling: spec 4.4 rule 4, the exhaustion 402
  // (issue 23 item 10; it was a 200 empty page), and nothing charged again.
  const replay = await f('/v1/signals?city=nyc&count=2&since=9', { headers: { 'x-payment': p.xPayment } });
  assert.equal(replay.status, 402);
  const again = (await replay.json()) as Record<string, any>;
  assert.deepEqual(
    [again.error, again.paid_through, again.latest],
    ['paid signals exhausted; buy more to continue', 5, 3],
  );
  assert.equal(count(db, 'SELECT count(*) FROM payments'), 1);
});

test('HEAD /v1/signals never moves money: its X-Payment is ignored', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 3);
  const p = await signFor(f, buyerA, 'nyc', 20, clock.now());
  const res = await f('/v1/signals?city=nyc&count=20', { method: 'HEAD', headers: { 'x-payment': p.xPayment } });
  assert.equal(res.status, 402);
  assert.equal(count(db, 'SELECT count(*) FROM payments'), 0);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
  // The same header on GET still buys (nothing was consumed by the HEAD).
  assert.equal((await f('/v1/signals?city=nyc&count=20', { headers: { 'x-payment': p.xPayment } })).status, 200);
});

test('reads: a non-Bearer Authorization is 401 about the token; a cursor past latest but below paid_through is a 200 empty page', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 3);
  const { body } = await buy(f, buyerA, 'nyc', 20, clock.now());
  for (const authorization of ['Basic abc', 'Bearer', 'Bearer   ', 'Token isr_x']) {
    const res = await f('/v1/signals?city=nyc', { headers: { authorization } });
    assert.equal(res.status, 401, authorization);
    assert.equal(((await res.json()) as any).error, 'receipt token required: Authorization: Bearer <receiptToken>');
  }
  const bearer = { authorization: `Bearer ${body.receiptToken}` };
  for (const since of [3, 10, 22]) {
    const res = await f(`/v1/signals?city=nyc&since=${since}`, { headers: bearer });
    assert.equal(res.status, 200, `since=${since}`);
    const page = (await res.json()) as any;
    assert.deepEqual([page.signals.length, page.paid_through, page.latest], [0, 23, 3]);
  }
  assert.equal((await f('/v1/signals?city=nyc&since=23', { headers: bearer })).status, 402);
  // Counts above the maximum say so whatever their size.
  for (const c of ['10001', '1e30', '999999999999999999999']) {
    const res = await f(`/v1/subscribe?city=nyc&count=${c}`, { method: 'POST' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error, 'count must be at most 10000');
  }
});

test('sample: the synthetic example until the city has two signals, then the real seq 1', async (t) => {
  const { f, db } = await setup(t);
  const sample = async () => (await f('/v1/sample?city=nyc')).json() as Promise<Record<string, any>>;
  assert.equal((await sample()).synthetic, true);
  insertSignals(db, 'nyc', 1);
  assert.equal((await sample()).synthetic, true, 'seq 1 is the latest: it is what buyers pay for');
  insertSignals(db, 'nyc', 1);
  const s = await sample();
  assert.deepEqual([s.synthetic, s.seq, s.city], [false, 1, 'nyc']);
});
