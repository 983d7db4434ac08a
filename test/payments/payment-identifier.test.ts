import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Account } from 'viem';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  generatePaymentId,
  isValidPaymentId as libraryIsValid,
  validatePaymentIdentifier,
} from '@x402/extensions/payment-identifier';
import { TEST_SECRET, testApp } from '../helpers/app.ts';

/** What the database keeps of an id: its keyed hash (issue 35 item 3). */
const stored = (id: string) => identifierKey(createSecretKey(TEST_SECRET), id);
import { insertSignals } from '../helpers/signals.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';
import { createFailedPaymentPrune } from '../../src/payments/store.ts';
import { ERRORS } from '../../src/lib/api-errors.ts';
import { identifierKey } from '../../src/x402/payment-identifier.ts';
import { createSecretKey } from 'node:crypto';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buyerA, buyerB, inApp, type Fetcher } from './buy.ts';
import {
  IsocastExactScheme,
  isValidPaymentId as clientIsValid,
  newPaymentId,
  payFor402,
  registerIsocast,
} from '../../packages/isocast-client/src/index.ts';
import { MOCK_PAY_TO } from '../../src/payments/pay-to.ts';
import { createStores } from '../../src/stores.ts';

/**
 * Issue 28 item 3: the x402 `payment-identifier` extension. The same id with the same payment
 * answers the stored result (same status, body and PAYMENT-RESPONSE, the receipt token included)
 * with no second settlement or entitlement; the same id with another payment answers 409. Real
 * server on 127.0.0.1, real viem signatures, the library's own declaration and id rule.
 */

/** A mock settler that counts settle calls and can be held open (for the concurrent cases). */
function countingSettler(delayMs = 0): Settler & { calls: number } {
  const mock = createMockSettler();
  const s = {
    ...mock,
    calls: 0,
    async settle(req: Parameters<Settler['settle']>[0]) {
      s.calls++;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return mock.settle(req);
    },
  };
  return s;
}

async function setup(t: Parameters<typeof testApp>[0], delayMs = 0) {
  const settler = countingSettler(delayMs);
  const e = testApp(t, { deps: { settler } });
  insertSignals(e.db, 'nyc', 3);
  return { ...e, settler, f: inApp(e.app) };
}

/**
 * A v2 PAYMENT-SIGNATURE for a fresh 402 of `path`, the way @x402/core's client builds it: the
 * server's extensions echoed, the id appended (appendPaymentIdentifierToExtensions's result).
 */
async function signed(f: Fetcher, path: string, init: RequestInit, account: Account, id: string | null, nowMs: number) {
  const res = await f(path, init);
  assert.equal(res.status, 402);
  const required = decodePaymentRequiredHeader(res.headers.get('PAYMENT-REQUIRED')!) as any;
  const p = await payFor402((await res.json()) as any, account, { nowMs });
  const { salt: _echo, ...payload } = JSON.parse(Buffer.from(p.xPayment, 'base64').toString()).payload;
  const extensions = structuredClone(required.extensions);
  if (id) extensions['payment-identifier'].info.id = id;
  const v2 = { x402Version: 2, resource: required.resource, accepted: required.accepts[0], payload, extensions };
  return Buffer.from(JSON.stringify(v2)).toString('base64');
}

const SUB = '/v1/subscribe?city=nyc&count=20';
const post = (header: string): RequestInit => ({ method: 'POST', headers: { 'payment-signature': header } });

async function answer(res: Response) {
  return { status: res.status, body: await res.text(), paid: res.headers.get('payment-response') };
}

test("the 402 declares payment-identifier as the library does; the id rule is the library's", async (t) => {
  const { f } = await setup(t);
  for (const [path, init] of [
    [SUB, { method: 'POST' }],
    ['/v1/signals?city=nyc', {}],
  ] as const) {
    const res = await f(path, init);
    const required = decodePaymentRequiredHeader(res.headers.get('PAYMENT-REQUIRED')!) as any;
    assert.deepEqual(required.extensions['payment-identifier'], declarePaymentIdentifierExtension(false));
    assert.deepEqual(validatePaymentIdentifier(required.extensions['payment-identifier']), { valid: true });
  }
  const ids = [
    generatePaymentId(),
    'a'.repeat(15),
    'a'.repeat(16),
    'a'.repeat(128),
    'a'.repeat(129),
    'pay_with-dash_and_underscore',
    'pay_with space_0123456789',
    'pay_ünïcode_0123456789',
    'pay.dot.0123456789abc',
    '',
  ];
  for (const id of ids) assert.equal(clientIsValid(id), libraryIsValid(id), id);
});

test('same id, same payment: the stored answer again (body, status, PAYMENT-RESPONSE, receipt), settled once', async (t) => {
  const { f, db, clock, settler } = await setup(t);
  const id = generatePaymentId();
  const header = await signed(f, SUB, { method: 'POST' }, buyerA, id, clock.now());
  const first = await answer(await f(SUB, post(header)));
  assert.equal(first.status, 200, first.body);
  const body = JSON.parse(first.body);
  assert.match(body.receiptToken, /^isr_/);
  assert.equal(body.idempotent, false);

  clock.advance(60_000);
  const again = await answer(await f(SUB, post(header)));
  assert.deepEqual(again, first);
  assert.equal(settler.calls, 1);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc')!.paidThroughSeq, 23);
  const row = db.prepare('SELECT payment_identifier, result FROM payments').get() as any;
  assert.equal(row.payment_identifier, stored(id));
  assert.ok(!JSON.stringify(row).includes(id), 'the id itself is not in the row');
  // Sealed: the stored answer does not show the receipt token to a database read.
  assert.ok(!row.result.includes(body.receiptToken.slice(4, 20)));

  // The same payment without the id (or with another id) gets the plain idempotent answer: no token.
  for (const other of [null, generatePaymentId()]) {
    const plain = JSON.parse((await answer(await f(SUB, post(header.replace(/.*/, await reid(header, other)))))).body);
    assert.deepEqual([plain.idempotent, plain.receiptToken], [true, undefined]);
  }
  assert.equal(settler.calls, 1);
});

/** The same PAYMENT-SIGNATURE with its id replaced (or removed). */
async function reid(header: string, id: string | null): Promise<string> {
  const v2 = JSON.parse(Buffer.from(header, 'base64').toString());
  if (id) v2.extensions['payment-identifier'].info.id = id;
  else delete v2.extensions['payment-identifier'].info.id;
  return Buffer.from(JSON.stringify(v2)).toString('base64');
}

test('same id, another payment: 409 with the error and disclaimer; nothing settled or applied', async (t) => {
  const { f, db, clock, settler } = await setup(t);
  const id = generatePaymentId();
  const first = await f(SUB, post(await signed(f, SUB, { method: 'POST' }, buyerA, id, clock.now())));
  assert.equal(first.status, 200);
  for (const account of [buyerA, buyerB]) {
    // A new 402 (the salt moved), a new authorization, the same id: refused before anything else.
    const other = await f(SUB, post(await signed(f, SUB, { method: 'POST' }, account, id, clock.now())));
    const body = (await other.json()) as any;
    assert.equal(other.status, 409);
    assert.equal(body.error, ERRORS.payment_identifier_conflict.message);
    assert.match(body.disclaimer, /Informational only/);
    assert.equal(other.headers.get('payment-response'), null);
  }
  // The inline read with the same id and another payment is refused the same way.
  const read = await f('/v1/signals?city=nyc&count=20', {
    headers: { 'payment-signature': await signed(f, '/v1/signals?city=nyc&count=20', {}, buyerB, id, clock.now()) },
  });
  assert.equal(read.status, 409);
  assert.equal(settler.calls, 1);
  assert.equal(createStores(db).entitlements.get(buyerB.address, 'nyc'), null);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc')!.paidThroughSeq, 23);
  assert.equal((db.prepare('SELECT count(*) AS n FROM payments').get() as any).n, 1);
});

test('a malformed id is refused, not ignored: 402 with the rule, nothing claimed', async (t) => {
  const { f, db, clock, settler } = await setup(t);
  for (const bad of ['short', 'a'.repeat(129), 'has space in it 0123456789']) {
    const res = await f(SUB, post(await signed(f, SUB, { method: 'POST' }, buyerA, bad, clock.now())));
    const body = (await res.json()) as any;
    assert.equal(res.status, 402);
    assert.equal(body.error, PAYMENT_ERRORS.verify);
    assert.match(body.reason, /payment-identifier.*16-128 characters/);
  }
  assert.equal(settler.calls, 0);
  assert.equal((db.prepare('SELECT count(*) AS n FROM payments').get() as any).n, 0);
});

test('the inline read: the same id and payment again reads the same page and the same receipt token', async (t) => {
  const { f, db, clock, settler } = await setup(t);
  const path = '/v1/signals?city=nyc&count=20';
  const header = await signed(f, path, {}, buyerA, generatePaymentId(), clock.now());
  const res = await f(path, { headers: { 'payment-signature': header } });
  const first = { ...(await answer(res)), token: res.headers.get('x-receipt-token') };
  assert.equal(first.status, 200, first.body);
  assert.deepEqual(
    JSON.parse(first.body).signals.map((s: any) => s.seq),
    [1, 2, 3],
  );
  insertSignals(db, 'nyc', 5); // new signals since: the stored answer is still the one given
  // A later cursor in the retry does not change the answer: it is the stored one.
  const res2 = await f(`${path}&since=2`, { headers: { 'payment-signature': header } });
  const again = { ...(await answer(res2)), token: res2.headers.get('x-receipt-token') };
  assert.deepEqual(again, first);
  assert.match(first.token ?? '', /^isr_/);
  assert.equal(settler.calls, 1);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc')!.paidThroughSeq, 23);
  // The same payment on the other route is not that route's stored answer: the plain state.
  const sub = await f(SUB, post(header));
  assert.deepEqual([((await sub.json()) as any).idempotent, sub.status], [true, 200]);
});

test('concurrent requests with the same id: the same payment settles once; another payment gets 409', async (t) => {
  const { f, db, clock, settler } = await setup(t, 300);
  const id = generatePaymentId();
  const header = await signed(f, SUB, { method: 'POST' }, buyerA, id, clock.now());
  const same = await Promise.all([1, 2, 3].map(() => f(SUB, post(header)).then(answer)));
  assert.deepEqual(
    same.map((a) => a.status),
    [200, 200, 200],
  );
  assert.deepEqual(same[1], same[0]);
  assert.deepEqual(same[2], same[0]);
  assert.match(JSON.parse(same[0]!.body).receiptToken, /^isr_/);
  assert.equal(settler.calls, 1);

  // Two different payments racing on one new id: the unique index lets exactly one through.
  const id2 = generatePaymentId();
  const [h1, h2] = [
    await signed(f, SUB, { method: 'POST' }, buyerB, id2, clock.now()),
    await signed(f, '/v1/subscribe?city=nyc&count=40', { method: 'POST' }, buyerB, id2, clock.now()),
  ];
  const raced = await Promise.all([
    f(SUB, post(h1)).then(answer),
    f('/v1/subscribe?city=nyc&count=40', post(h2)).then(answer),
  ]);
  assert.deepEqual(raced.map((a) => a.status).sort(), [200, 409]);
  assert.equal(settler.calls, 2);
  assert.equal(
    (db.prepare('SELECT count(*) AS n FROM payments WHERE payment_identifier = ?').get(stored(id2)) as any).n,
    1,
  );
});

test("pruned with its payment: a failed payment's id goes with it and is free again", async (t) => {
  const settler = countingSettler();
  const failing: Settler = {
    ...settler,
    settle: async () => ({ ok: false, inDoubt: false, reason: 'insufficient_funds' }),
  };
  const e = testApp(t, { deps: { settler: failing } });
  const f = inApp(e.app);
  const id = generatePaymentId();
  const res = await f(SUB, post(await signed(f, SUB, { method: 'POST' }, buyerA, id, e.clock.now())));
  assert.equal(res.status, 402);
  assert.equal(((await res.json()) as any).error, PAYMENT_ERRORS.settle);
  // Within retention the id stays bound to the failed payment: another payment with it is 409.
  const again = await f(SUB, post(await signed(f, SUB, { method: 'POST' }, buyerB, id, e.clock.now())));
  assert.equal(again.status, 409);
  assert.equal(createFailedPaymentPrune(e.db).run(e.clock.now() + 1, 100).changes, 1);
  assert.equal(
    (e.db.prepare('SELECT count(*) AS n FROM payments WHERE payment_identifier = ?').get(stored(id)) as any).n,
    0,
  );
  // Pruned with it: the id now goes with a new payment (which this settler refuses again: 402).
  const fresh = await f(SUB, post(await signed(f, SUB, { method: 'POST' }, buyerB, id, e.clock.now())));
  assert.equal(((await fresh.json()) as any).error, PAYMENT_ERRORS.settle);
  assert.equal(
    (e.db.prepare('SELECT payer FROM payments WHERE payment_identifier = ?').get(stored(id)) as any).payer,
    buyerB.address.toLowerCase(),
  );
});

test('a stock @x402/fetch client sends the id (appendPaymentIdentifierToExtensions); its exact header again answers the same', async (t) => {
  const { f, clock, settler } = await setup(t);
  const sent: string[] = [];
  const spy: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const v = req.headers.get('payment-signature');
    if (v) sent.push(v);
    return f(new URL(req.url).pathname + new URL(req.url).search, {
      method: req.method,
      headers: req.headers,
    });
  };
  const id = generatePaymentId('iso_');
  const client = new x402Client();
  registerIsocast(client, new IsocastExactScheme(buyerA, { payTo: MOCK_PAY_TO, now: () => clock.now() }));
  // The library's documented client step: add the id to the server's declaration before paying.
  client.onBeforePaymentCreation(async ({ paymentRequired }) => {
    appendPaymentIdentifierToExtensions(paymentRequired.extensions ?? {}, id);
  });
  const payFetch = wrapFetchWithPayment(spy, client);
  const first = await payFetch('http://isocast.test/v1/subscribe?city=nyc&count=20', { method: 'POST' });
  const firstBody = await first.text();
  assert.equal(first.status, 200, firstBody);
  const payload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString());
  assert.equal(payload.extensions['payment-identifier'].info.id, id);
  // The retry a client makes when the answer was lost: the same PAYMENT-SIGNATURE, the stored answer.
  const retry = await f(SUB, post(sent[0]!));
  assert.equal(retry.status, 200);
  assert.equal(await retry.text(), firstBody);
  assert.equal(retry.headers.get('payment-response'), first.headers.get('payment-response'));
  // The stock client asked again signs a new authorization (a new 402, a new salt): another
  // payment with the same id, which the extension's table answers with 409.
  const second = await payFetch('http://isocast.test/v1/subscribe?city=nyc&count=20', { method: 'POST' });
  assert.equal(second.status, 409);
  assert.equal(((await second.json()) as any).error, ERRORS.payment_identifier_conflict.message);
  assert.equal(settler.calls, 1);
});

test('@isocast/client: IsocastExactScheme({ paymentId }) sends a new id with each v2 payment', async (t) => {
  const { f, clock, settler } = await setup(t);
  const sent: string[] = [];
  const spy: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const v = req.headers.get('payment-signature');
    if (v) sent.push(v);
    const url = new URL(req.url);
    return f(url.pathname + url.search, { method: req.method, headers: req.headers });
  };
  const ids: string[] = [];
  const client = new x402Client();
  registerIsocast(
    client,
    new IsocastExactScheme(buyerA, {
      payTo: MOCK_PAY_TO,
      now: () => clock.now(),
      paymentId: () => {
        ids.push(newPaymentId('iso_'));
        return ids.at(-1)!;
      },
    }),
  );
  const payFetch = wrapFetchWithPayment(spy, client);
  for (const _ of [1, 2]) {
    const res = await payFetch('http://isocast.test/v1/subscribe?city=nyc&count=20', { method: 'POST' });
    assert.equal(res.status, 200, await res.text());
  }
  assert.equal(ids.length, 2);
  assert.notEqual(ids[0], ids[1]);
  const payloads = sent.map((h) => JSON.parse(Buffer.from(h, 'base64').toString()));
  assert.deepEqual(
    payloads.map((p) => p.extensions['payment-identifier'].info.id),
    ids,
  );
  // The server's declaration is kept beside the id (the stock client merges them).
  assert.equal(payloads[0].extensions['payment-identifier'].info.required, false);
  assert.ok(clientIsValid(ids[0]) && libraryIsValid(ids[0]!));
  // The first payment's exact header again: its stored answer, nothing settled again.
  const again = await f(SUB, post(sent[0]!));
  assert.equal(again.status, 200);
  assert.match(((await again.json()) as any).receiptToken, /^isr_/);
  assert.equal(settler.calls, 2);
});
