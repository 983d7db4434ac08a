import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { createMockSettler, mockTxHash } from '../../src/payments/settlers/mock.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';
import { ERRORS } from '../../src/lib/api-errors.ts';

const ALREADY_APPLIED = ERRORS.already_applied.message;
import { buyerA, inApp, signFor, subscribeWith, tamper, type Fetcher } from './buy.ts';

/**
 * Issue 23 items 1 and 10: an inline X-Payment reads signal rows only in the request whose own
 * settlement moved the money. Every field of a settled authorization (the signature's v, r, s
 * included) is public in the transfer's calldata, so a known (payer, nonce) on GET /v1/signals
 * answers the exhaustion-shaped 402 and never rows; on POST /v1/subscribe it answers the
 * idempotent state with no receipt token.
 */
const EXHAUSTED = 'paid signals exhausted; buy more to continue';
const ZERO_SIGNATURE = `0x${'00'.repeat(65)}`;

async function setup(t: Parameters<typeof testApp>[0], settler?: Settler) {
  const e = testApp(t, settler ? { deps: { settler } } : {});
  insertSignals(e.db, 'nyc', 5);
  return { ...e, f: inApp(e.app) };
}

const read = async (f: Fetcher, query: string, xPayment: string) => {
  const res = await f(`/v1/signals?${query}`, { headers: { 'x-payment': xPayment } });
  return { status: res.status, body: (await res.json()) as Record<string, any>, res };
};

/** What an attacker rebuilds from the victim's settled transfer: the public fields, with `signature`. */
const publicCopy = (xPayment: string, signature: string) =>
  tamper(xPayment, (j) => {
    j.payload.signature = signature;
    j.payload.authorization.validBefore = '1';
    delete j.payload.salt;
  });

const realSignature = (xPayment: string) =>
  JSON.parse(Buffer.from(xPayment, 'base64').toString('utf8')).payload.signature as string;

test('a victim reads once; the public fields replayed (zero or real signature) read no rows and mint no token', async (t) => {
  const { f, db, clock } = await setup(t);
  const p = await signFor(f, buyerA, 'nyc', 20, clock.now());
  const victim = await read(f, 'city=nyc&since=0&count=20', p.xPayment);
  assert.equal(victim.status, 200, JSON.stringify(victim.body));
  assert.deepEqual(
    victim.body.signals.map((s: any) => s.seq),
    [1, 2, 3, 4, 5],
  );
  assert.match(victim.res.headers.get('x-receipt-token') ?? '', /^isr_/);

  for (const header of [
    publicCopy(p.xPayment, ZERO_SIGNATURE),
    publicCopy(p.xPayment, realSignature(p.xPayment)),
    p.xPayment,
  ]) {
    const r = await read(f, 'city=nyc&since=0&count=20', header);
    assert.equal(r.status, 402, JSON.stringify(r.body));
    assert.equal(r.body.signals, undefined);
    assert.equal(r.body.error, ALREADY_APPLIED);
    assert.equal(r.body.idempotent, true);
    assert.equal(
      r.body.receipt,
      "Authorization: Bearer <receiptToken> reads this wallet's signals; lost it? POST /v1/receipts with a wallet signature",
    );
    assert.deepEqual([r.body.paid_through, r.body.latest], [25, 5]);
    assert.equal(r.res.headers.get('x-receipt-token'), null);
    assert.equal(r.res.headers.get('x-payment-response'), null);
    // The forged header on subscribe: the idempotent state, never a receipt token.
    const s = await subscribeWith(f, header, 'nyc', 20);
    assert.equal(s.status, 200, JSON.stringify(s.body));
    assert.equal(s.body.idempotent, true);
    assert.equal(s.body.receiptToken, undefined);
  }
  assert.equal(db.prepare('SELECT count(*) FROM receipts').pluck().get(), 1);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 1);
});

test('spec 4.4 rule 4: an applied X-Payment again with since >= paid_through is the exhaustion 402', async (t) => {
  const { f, clock } = await setup(t);
  const p = await signFor(f, buyerA, 'nyc', 2, clock.now());
  assert.equal((await read(f, 'city=nyc&count=2&since=0', p.xPayment)).status, 200);
  for (const since of [7, 9]) {
    const r = await read(f, `city=nyc&count=2&since=${since}`, p.xPayment);
    assert.equal(r.status, 402);
    assert.equal(r.body.error, EXHAUSTED);
    assert.deepEqual([r.body.paid_through, r.body.latest, r.body.idempotent], [7, 5, true]);
    assert.ok(Array.isArray(r.body.accepts), 'the normal challenge is part of the exhaustion answer');
  }
});

test('copies coalesced onto an in-flight settle read nothing; only the request that settled reads', async (t) => {
  const mock = createMockSettler();
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let started!: () => void;
  const settling = new Promise<void>((r) => {
    started = r;
  });
  const settler: Settler = {
    ...mock,
    settle: async (req) => {
      started();
      await gate;
      return mock.settle(req);
    },
  };
  const { f, clock } = await setup(t, settler);
  const p = await signFor(f, buyerA, 'nyc', 20, clock.now());
  const first = read(f, 'city=nyc&since=0&count=20', p.xPayment);
  await settling;
  // While the victim's settle runs: the same header, a zero-signature copy, and the real signature.
  const copies = [
    p.xPayment,
    publicCopy(p.xPayment, ZERO_SIGNATURE),
    publicCopy(p.xPayment, realSignature(p.xPayment)),
  ];
  const racing = copies.map((h) => read(f, 'city=nyc&since=0&count=20', h));
  const subscribing = subscribeWith(f, copies[1]!, 'nyc', 20);
  await new Promise((r) => setTimeout(r, 50));
  release();
  const [own, ...others] = await Promise.all([first, ...racing]);
  assert.equal(own!.status, 200);
  assert.equal(own!.body.signals.length, 5);
  for (const o of others) {
    assert.equal(o.status, 402, JSON.stringify(o.body));
    assert.equal(o.body.signals, undefined);
    assert.equal(o.res.headers.get('x-receipt-token'), null);
  }
  const sub = await subscribing;
  assert.equal(sub.body.receiptToken, undefined);
});

test('a payment resolved from doubt on a replayed header reads nothing', async (t) => {
  // The first settle's outcome is unknown (503); the chain later says the authorization was used.
  const mock = createMockSettler();
  let used = false;
  const settler: Settler = {
    ...mock,
    settle: async () => ({ ok: false, inDoubt: true, reason: 'rpc timeout' }),
    status: async (payer, nonce) =>
      used ? { state: 'used', txHash: mockTxHash(payer, nonce) } : { state: 'unknown', reason: 'no answer' },
  };
  const { f, clock } = await setup(t, settler);
  const p = await signFor(f, buyerA, 'nyc', 20, clock.now());
  assert.equal((await read(f, 'city=nyc&since=0&count=20', p.xPayment)).status, 503);
  used = true;
  const r = await read(f, 'city=nyc&since=0&count=20', publicCopy(p.xPayment, ZERO_SIGNATURE));
  assert.equal(r.status, 402, JSON.stringify(r.body));
  assert.equal(r.body.signals, undefined);
  assert.equal(r.body.idempotent, true);
});
