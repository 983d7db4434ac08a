import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { BASE_USDC } from '../../packages/isocast-client/src/chain.ts';
import { paymentRequired } from '../../src/payments/envelope.ts';
import { FIRST_STEP, bindingNonce, currentSalt } from '../../src/payments/binding.ts';
import { authorizationTypedData } from '../../src/x402/eip3009.ts';
import { tiersPublic } from '../../src/pricing/tiers.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { microToUsd } from '../../src/lib/money.ts';
import { RECEIPT_REQUEST_DOMAIN, RECEIPT_REQUEST_TYPES } from '../../packages/isocast-client/src/index.ts';
import { listen } from '../helpers/app.ts';

/**
 * A small stand-in for an isocast server that speaks the buyer-facing wire contract exactly:
 * GET /v1/signals/meta, POST /v1/subscribe (402 challenge; X-Payment verified for real: signature,
 * amount, bound nonce, echoed salt), POST /v1/receipts (EIP-712 ReceiptRequest) and GET
 * /v1/signals with a bearer. Knobs make it hostile (edit the challenge or meta), make it answer
 * the in-doubt 503, or switch the payment-plane contract (salt echo, receipts) on and off. It
 * records every X-Payment header it receives.
 */
export const FAKE_PAY_TO = '0x00000000000000000000000000000000000000aa';
export const DISCLAIMER = 'Informational only.';

export type FakeOptions = {
  /** The new contract: challenges carry saltEcho and payments must echo the salt. */
  saltEcho?: boolean;
  /** POST /v1/receipts exists. */
  receipts?: boolean;
  /** Edit the 402 body before it is sent. */
  challenge?(body: any): void;
  /** Edit the meta body before it is sent. */
  meta?(body: any): void;
  /** Answer this many paid requests with the in-doubt 503 before settling. */
  pendingFirst?: number;
  /** Every purchase answers idempotent: true. */
  idempotent?: boolean;
  nowMs?: () => number;
};

export type Fake = {
  url: string;
  xPayments: string[];
  requests: { method: string; path: string }[];
  /** wallet (lowercase) -> city -> paidThroughSeq */
  entitlements: Map<string, Map<string, number>>;
  latest: Map<string, number>;
  tokens: Map<string, string>;
};

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export async function startFakeIsocast(
  t: { after(fn: () => Promise<void> | void): void },
  o: FakeOptions = {},
): Promise<Fake> {
  const now = () => o.nowMs?.() ?? Date.now();
  const fake: Fake = {
    url: '',
    xPayments: [],
    requests: [],
    entitlements: new Map(),
    latest: new Map(),
    tokens: new Map(),
  };
  const salts = new Map<string, Hex>();
  const usedReceiptSigs = new Set<string>();
  let pending = o.pendingFirst ?? 0;
  let saltSeq = 0;

  function challenge(city: string, count: number, resource: string) {
    const body: any = JSON.parse(
      JSON.stringify(
        paymentRequired({
          city,
          count,
          resource: `${fake.url}${resource}`,
          payTo: FAKE_PAY_TO as Address,
          usdc: BASE_USDC as Address,
          salt: currentSalt(Buffer.alloc(32, 7), { city, count, step: FIRST_STEP, nowMs: now() }),
          termsUrl: `${fake.url}/terms.txt`,
          mode: 'live',
        }),
      ),
    );
    if (!o.saltEcho) {
      // A server that asks for no echo: the salt binds on its own.
      const { saltEcho: _echo, ...old } = body.extra.binding;
      body.extra.binding = old;
      body.accepts[0].extra.binding = body.extra.binding;
    }
    if (o.saltEcho) {
      // A fresh salt per challenge, remembered so the echo can be checked.
      const salt = `0x${(++saltSeq).toString(16).padStart(64, '0')}` as Hex;
      salts.set(salt, salt);
      body.extra.binding = { ...body.extra.binding, salt, saltEcho: 'payload.salt' };
      body.accepts[0].extra.binding = body.extra.binding;
    }
    body.disclaimer = DISCLAIMER;
    o.challenge?.(body);
    return body;
  }

  async function purchase(header: string, city: string, count: number): Promise<Response> {
    const p = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    const a = p.payload.authorization;
    const auth = {
      from: a.from,
      to: a.to,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce,
    };
    const signer = await recoverTypedDataAddress({
      ...authorizationTypedData(BASE_USDC as Address, auth),
      signature: p.payload.signature,
    });
    if (signer.toLowerCase() !== a.from.toLowerCase())
      return json(402, { error: 'payment verification failed', reason: 'bad signature', disclaimer: DISCLAIMER });
    if (auth.value !== BigInt(bundlePrice(count).totalMicro))
      return json(402, { error: 'payment verification failed', reason: 'amount', disclaimer: DISCLAIMER });
    if (o.saltEcho) {
      const salt = p.payload.salt as Hex | undefined;
      if (!salt || !salts.has(salt) || bindingNonce({ payer: a.from, city, count, salt }) !== a.nonce) {
        return json(402, { error: 'nonce does not bind this payer, city and count', disclaimer: DISCLAIMER });
      }
    }
    if (pending > 0) {
      pending--;
      return json(
        503,
        {
          error: 'settlement pending — retry the same X-Payment; you will not be charged twice',
          retryAfterSeconds: 1,
          disclaimer: DISCLAIMER,
        },
        { 'retry-after': '1' },
      );
    }
    const wallet = a.from.toLowerCase();
    const mine = fake.entitlements.get(wallet) ?? new Map<string, number>();
    const latest = fake.latest.get(city) ?? 0;
    const paidThrough = Math.max(mine.get(city) ?? 0, latest) + count;
    mine.set(city, paidThrough);
    fake.entitlements.set(wallet, mine);
    const token = `isr_fake_${wallet.slice(2, 10)}_${fake.tokens.size}`;
    fake.tokens.set(token, wallet);
    const price = bundlePrice(count);
    return json(200, {
      ok: true,
      city,
      count,
      unitPriceUsd: microToUsd(price.unitMicro),
      amountUsd: microToUsd(price.totalMicro),
      latestSeq: latest,
      paidThroughSeq: paidThrough,
      receiptToken: token,
      txHash: `0x${'ab'.repeat(32)}`,
      idempotent: o.idempotent === true,
      disclaimer: DISCLAIMER,
    });
  }

  async function receipts(req: Request): Promise<Response> {
    const b = (await req.json()) as { wallet: Address; timestamp: number; signature: Hex };
    if (Math.abs(Math.floor(now() / 1000) - b.timestamp) > 600)
      return json(401, { error: 'stale timestamp', disclaimer: DISCLAIMER });
    const signer = await recoverTypedDataAddress({
      domain: RECEIPT_REQUEST_DOMAIN,
      types: RECEIPT_REQUEST_TYPES,
      primaryType: 'ReceiptRequest',
      // The fake is the deployment the request reached: its own origin is what must be signed.
      message: { wallet: b.wallet, origin: new URL(req.url).origin, timestamp: BigInt(b.timestamp) },
      signature: b.signature,
    }).catch(() => null);
    if (!signer || signer.toLowerCase() !== b.wallet.toLowerCase())
      return json(401, { error: 'signature verification failed', disclaimer: DISCLAIMER });
    const mine = fake.entitlements.get(b.wallet.toLowerCase());
    if (!mine) return json(404, { error: 'no purchases for this wallet', disclaimer: DISCLAIMER });
    const cities = [...mine].map(([city, paidThroughSeq]) => ({ city, paidThroughSeq }));
    if (usedReceiptSigs.has(b.signature))
      return json(200, { ok: true, wallet: b.wallet, cities, disclaimer: DISCLAIMER });
    usedReceiptSigs.add(b.signature);
    const token = `isr_recovered_${fake.tokens.size}`;
    fake.tokens.set(token, b.wallet.toLowerCase());
    return json(200, { ok: true, wallet: b.wallet, receiptToken: token, cities, disclaimer: DISCLAIMER });
  }

  function signals(req: Request, city: string, since: number): Response {
    const token = /^Bearer (\S+)$/.exec(req.headers.get('authorization') ?? '')?.[1];
    const wallet = token ? fake.tokens.get(token) : undefined;
    if (!wallet)
      return json(402, {
        ...challenge(city, 20, `/v1/signals?city=${city}&count=20`),
        error: 'receipt token not recognised; pay to continue',
      });
    const paidThrough = fake.entitlements.get(wallet)?.get(city) ?? 0;
    const latest = fake.latest.get(city) ?? 0;
    if (since >= paidThrough) {
      return json(402, {
        ...challenge(city, 20, `/v1/signals?city=${city}&count=20`),
        error: 'paid signals exhausted; buy more to continue',
        paid_through: paidThrough,
        latest,
      });
    }
    const end = Math.min(paidThrough, latest, since + 100);
    const rows = [];
    for (let seq = since + 1; seq <= end; seq++) {
      rows.push({
        city,
        seq,
        targetDate: '2026-07-15',
        old: { reading: 41, unit: 'F', bucket: '40-41°F' },
        new: { reading: 42, unit: 'F', bucket: '42-43°F' },
        buckets: null,
        observedAt: '2026-07-15T15:00:00Z',
        marketUrl: 'https://polymarket.com/event/x',
      });
    }
    return json(200, {
      signals: rows,
      next_cursor: Math.max(since, end),
      paid_through: paidThrough,
      latest,
      more: Math.min(paidThrough, latest) > end,
      disclaimer: DISCLAIMER,
    });
  }

  fake.url = await listen(t, async (req) => {
    const u = new URL(req.url);
    fake.requests.push({ method: req.method, path: u.pathname + u.search });
    const header = req.headers.get('x-payment');
    if (header) fake.xPayments.push(header);
    const city = u.searchParams.get('city') ?? '';
    if (req.method === 'GET' && u.pathname === '/v1/signals/meta') {
      const body: any = {
        city,
        latestSeq: fake.latest.get(city) ?? 0,
        unitPriceUsd: 0.005,
        minSpendUsd: 0.01,
        currency: 'USDC',
        network: 'eip155:8453',
        payTo: FAKE_PAY_TO,
        tiers: tiersPublic(),
        disclaimer: DISCLAIMER,
      };
      o.meta?.(body);
      return json(200, body);
    }
    if (req.method === 'POST' && u.pathname === '/v1/subscribe') {
      const count = Number(u.searchParams.get('count'));
      if (header) return purchase(header, city, count);
      return json(402, challenge(city, count, u.pathname + u.search));
    }
    if (req.method === 'POST' && u.pathname === '/v1/receipts' && o.receipts) return receipts(req);
    if (req.method === 'GET' && u.pathname === '/v1/signals')
      return signals(req, city, Number(u.searchParams.get('since') ?? 0));
    return json(404, { error: 'not found', disclaimer: DISCLAIMER });
  });
  return fake;
}
