import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodePacked, keccak256, type Address, type Hex, type PrivateKeyAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';

/**
 * Issue 24 item 5: a client written from the spec alone (service-spec.md 2.7 and 5) pays. It
 * reads `extra.binding.salt` of the 402, computes nonce = keccak256(abi.encodePacked(payer,
 * citySlug, uint256 count, bytes32 salt)), signs USDC's EIP-3009 TransferWithAuthorization with
 * viem and sends a plain x402 v1 payload: no `payload.salt`, no project buyer code.
 */
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address;
const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

const wallet = (n: number) => privateKeyToAccount(`0x${n.toString(16).padStart(64, '0')}` as Hex);

/** "$0.10" -> 100000 (USDC has 6 decimals). */
function priceToAtomic(price: string): bigint {
  const [whole, frac = ''] = price.replace('$', '').split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
}

/** The spec's X-Payment for a 402 body: bound nonce, signed authorization, base64 JSON. */
async function specPayment(
  account: PrivateKeyAccount,
  body: any,
  nowS: number,
): Promise<{ header: string; nonce: Hex }> {
  const offer = body.accepts[0];
  const { citySlug, count, salt } = body.extra.binding;
  const nonce = keccak256(
    encodePacked(['address', 'string', 'uint256', 'bytes32'], [account.address, citySlug, BigInt(count), salt]),
  );
  const message = {
    from: account.address,
    to: offer.payTo as Address,
    value: priceToAtomic(offer.price),
    validAfter: 0n,
    validBefore: BigInt(nowS + 300),
    nonce,
  };
  const signature = await account.signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: BASE_USDC },
    types: TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const payload = {
    x402Version: 1,
    scheme: 'exact',
    network: 'eip155:8453',
    payload: {
      signature,
      authorization: {
        ...message,
        value: message.value.toString(),
        validAfter: '0',
        validBefore: message.validBefore.toString(),
      },
    },
  };
  return { header: Buffer.from(JSON.stringify(payload)).toString('base64'), nonce };
}

async function setup(t: Parameters<typeof testApp>[0], settler?: Settler) {
  // These tests buy in tight loops from one address: the address limit (test/limits) would answer 429.
  const env = testApp(t, { env: { RATE_LIMIT_ADDRESS_PER_MIN: '0' }, ...(settler ? { deps: { settler } } : {}) });
  const nowS = () => Math.floor(env.clock.now() / 1000);
  const ask = async (path: string, init: RequestInit = {}) => {
    const res = await env.app.request(path, init);
    return { res, body: (await res.json()) as any };
  };
  /** 402, sign, pay: the whole spec flow for one POST /v1/subscribe. */
  const subscribe = async (account: PrivateKeyAccount, city: string, count: number) => {
    const path = `/v1/subscribe?city=${city}&count=${count}`;
    const challenge = await ask(path, { method: 'POST' });
    assert.equal(challenge.res.status, 402);
    const { header, nonce } = await specPayment(account, challenge.body, nowS());
    const paid = await ask(path, { method: 'POST', headers: { 'X-Payment': header } });
    return { ...paid, nonce, salt: challenge.body.extra.binding.salt as Hex, header };
  };
  const steps = (city: string, count: number) =>
    env.db.prepare('SELECT k FROM salt_steps WHERE city = ? AND count = ? ORDER BY k').pluck().all(city, count);
  return { ...env, ask, subscribe, nowS, steps };
}

test('a spec-only client buys the same bundle twice in a row: both settle, the second is a second ceiling step', async (t) => {
  const s = await setup(t);
  insertSignals(s.db, 'nyc', 5);
  const buyer = wallet(0x5bec);
  const one = await s.subscribe(buyer, 'nyc', 20);
  assert.equal(one.res.status, 200, JSON.stringify(one.body));
  const two = await s.subscribe(buyer, 'nyc', 20);
  assert.equal(two.res.status, 200, JSON.stringify(two.body));
  assert.notEqual(one.salt, two.salt, 'the settled purchase moved the served salt');
  assert.notEqual(one.nonce, two.nonce);
  assert.deepEqual(
    [one.body.idempotent, one.body.paidThroughSeq, two.body.idempotent, two.body.paidThroughSeq],
    [false, 25, false, 45],
  );
  assert.ok(one.body.receiptToken && two.body.receiptToken);

  // The paid read, inline, from the exhaustion 402 its receipt token gets: twice in a row as well.
  const reads: string[] = [];
  const bearer = { authorization: `Bearer ${two.body.receiptToken}` };
  let since = 45;
  for (let i = 0; i < 2; i++) {
    const path = `/v1/signals?city=nyc&count=2&since=${since}`;
    const exhausted = await s.ask(path, { headers: bearer });
    assert.equal(exhausted.res.status, 402);
    assert.equal(exhausted.body.paid_through, since);
    const { header } = await specPayment(buyer, exhausted.body, s.nowS());
    const page = await s.ask(path, { headers: { 'X-Payment': header } });
    assert.equal(page.res.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.paid_through, since + 2);
    reads.push(
      `GET ${path} -> 402 paid_through ${since}; with X-Payment -> ${page.res.status} paid_through ${page.body.paid_through}`,
    );
    since = page.body.paid_through;
  }
  t.diagnostic(
    `POST /v1/subscribe?city=nyc&count=20 (latest 5) -> ${one.res.status} paidThroughSeq ${one.body.paidThroughSeq}`,
  );
  t.diagnostic(
    `POST /v1/subscribe?city=nyc&count=20 again -> ${two.res.status} paidThroughSeq ${two.body.paidThroughSeq}`,
  );
  for (const r of reads) t.diagnostic(r);
});

test('concurrent buyers of one bundle bind to the same salt and all settle; the step moves once per served salt', async (t) => {
  const s = await setup(t);
  const path = '/v1/subscribe?city=paris&count=2';
  const buyers = [wallet(0xa1), wallet(0xa2), wallet(0xa3)];
  const challenges = await Promise.all(buyers.map(() => s.ask(path, { method: 'POST' })));
  const salt = challenges[0]!.body.extra.binding.salt;
  assert.ok(
    challenges.every((c) => c.body.extra.binding.salt === salt),
    'one served salt per bundle and step',
  );
  const headers = await Promise.all(buyers.map((b, i) => specPayment(b, challenges[i]!.body, s.nowS())));
  const paid = await Promise.all(
    headers.map((h) => s.ask(path, { method: 'POST', headers: { 'X-Payment': h.header } })),
  );
  assert.deepEqual(
    paid.map((p) => [p.res.status, p.body.paidThroughSeq, p.body.idempotent]),
    buyers.map(() => [200, 2, false]),
  );
  // Three purchases bound to k = 0: the first to settle moved it to 1, the others matched k = 0.
  assert.deepEqual(s.steps('paris', 2), [1]);
  assert.deepEqual(s.db.prepare('SELECT DISTINCT binding_k FROM payments').pluck().all(), [0]);
  const next = await s.ask(path, { method: 'POST' });
  assert.notEqual(next.body.extra.binding.salt, salt);
  // A buyer still holding the old challenge pays it a minute later: still a served salt.
  s.clock.advance(60_000);
  const late = await s.subscribe(wallet(0xa4), 'paris', 2);
  assert.equal(late.res.status, 200);
  const stale = await specPayment(wallet(0xa5), challenges[0]!.body, s.nowS());
  assert.equal((await s.ask(path, { method: 'POST', headers: { 'X-Payment': stale.header } })).res.status, 200);
});

test('a refused settlement moves no step: the same nonce answers the refusal until the minute turns', async (t) => {
  const mock = createMockSettler();
  let refuse = true;
  const settler: Settler = {
    ...mock,
    settle: async (req) => (refuse ? { ok: false, inDoubt: false, reason: 'insufficient funds' } : mock.settle(req)),
  };
  const s = await setup(t, settler);
  const buyer = wallet(0xb0);
  const first = await s.subscribe(buyer, 'tokyo', 2);
  assert.deepEqual([first.res.status, first.body.reason], [402, 'insufficient funds']);
  assert.deepEqual(s.steps('tokyo', 2), [], 'a payment that moved nothing moves no step');
  refuse = false;
  // Funded now, but within the same minute the 402 serves the same salt: the same nonce, whose
  // refusal is final ("not charged" is never settled later).
  const again = await s.subscribe(buyer, 'tokyo', 2);
  assert.equal(again.nonce, first.nonce);
  assert.equal(again.res.status, 402);
  // The next minute's salt is fresh.
  s.clock.advance(60_000);
  const later = await s.subscribe(buyer, 'tokyo', 2);
  assert.notEqual(later.nonce, first.nonce);
  assert.deepEqual([later.res.status, later.body.paidThroughSeq], [200, 2]);
  assert.deepEqual(s.steps('tokyo', 2), [1]);
});

test('only the newest steps are tried: a challenge 64 paid purchases old is refused, not charged', async (t) => {
  const s = await setup(t);
  const path = '/v1/subscribe?city=madrid&count=2';
  const old = await s.ask(path, { method: 'POST' });
  for (let i = 0; i < 64; i++) {
    const r = await s.subscribe(wallet(0x1000 + i), 'madrid', 2);
    assert.equal(r.res.status, 200);
  }
  assert.equal(s.steps('madrid', 2).length, 64);
  assert.equal(Math.max(...(s.steps('madrid', 2) as number[])), 64);
  const late = await specPayment(wallet(0x2000), old.body, s.nowS());
  const refused = await s.ask(path, { method: 'POST', headers: { 'X-Payment': late.header } });
  assert.deepEqual(
    [refused.res.status, refused.body.error],
    [402, 'payment binding mismatch: nonce must bind (payer, city, count)'],
  );
  assert.equal(
    s.db.prepare('SELECT count(*) FROM payments WHERE payer = ?').pluck().get(wallet(0x2000).address.toLowerCase()),
    0,
  );
});
