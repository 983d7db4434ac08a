import { createSIWxPayload, encodeSIWxHeader, type SIWxExtensionInfo } from '@x402/extensions/sign-in-with-x';
import type { PrivateKeyAccount } from 'viem/accounts';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { signInHeader } from '../../packages/isocast-client/src/siwx.ts';
import type { AttackCase, AttackContext, HttpAnswer } from './types.ts';

/**
 * Sign-in-with-x on GET /v1/signals (issue 28 item 1): a SIGN-IN-WITH-X header reads the signing
 * wallet's signals with no token and no payment, so every way to get one without that wallet's
 * fresh signature for this server must read nothing.
 */
const rows = (a: HttpAnswer) => (Array.isArray(a.json?.signals) ? a.json.signals.length : 0);
const describe = (a: HttpAnswer) => `${a.status} ${JSON.stringify(a.json?.error ?? '')}, ${rows(a)} rows`;

/** The buyer pays for `count` of the seeded city inline, so its wallet is entitled. */
async function buys(ctx: AttackContext, buyer: PrivateKeyAccount): Promise<string> {
  const path = `/v1/signals?city=${ctx.city}&count=20`;
  const challenge = await ctx.http(path);
  const p = await payFor402(challenge.json, buyer, { nowMs: Date.now() });
  const bought = await ctx.http(path, { headers: { 'x-payment': p.xPayment } });
  if (bought.status !== 200) throw new Error(`the buyer's own purchase answered ${bought.status}`);
  return path;
}

/** The sign-in the server's 402 proposes right now. */
async function proposed(ctx: AttackContext, path: string): Promise<SIWxExtensionInfo> {
  const c = await ctx.http(path);
  const ext = decodePaymentRequiredHeader(c.headers.get('payment-required')!).extensions?.['sign-in-with-x'] as {
    info: SIWxExtensionInfo;
  };
  return ext.info;
}

const sign = async (info: SIWxExtensionInfo, who: PrivateKeyAccount, url: string) =>
  encodeSIWxHeader(await createSIWxPayload({ ...info, chainId: 'eip155:8453', type: 'eip191' }, who, url));

export const cases: AttackCase[] = [
  {
    name: "a sign-in the buyer made for another server (a lookalike's 402) reads nothing here",
    expected: '401 sign-in-with-x is for another server, 0 rows',
    fast: true,
    async run(ctx) {
      const buyer = ctx.account('siwx-lookalike');
      const path = await buys(ctx, buyer);
      const info = await proposed(ctx, path);
      const lookalike = 'https://isocast-signals.example';
      const header = await sign(
        { ...info, domain: new URL(lookalike).host, uri: `${lookalike}${path}` },
        buyer,
        lookalike,
      );
      const a = await ctx.http(path, { headers: { 'sign-in-with-x': header } });
      return { observed: describe(a), ok: a.status === 401 && rows(a) === 0 && Boolean(a.json?.disclaimer) };
    },
  },
  {
    name: "a copy of the buyer's sign-in header (replayed nonce) reads nothing",
    expected: 'the buyer reads (200); the same header again: 401 nonce already used, 0 rows',
    fast: true,
    async run(ctx) {
      const buyer = ctx.account('siwx-replay');
      const path = await buys(ctx, buyer);
      const url = `${ctx.baseUrl}${path}`;
      const header = (await signInHeader((await ctx.http(path)).headers.get('payment-required')!, buyer, url))!;
      const first = await ctx.http(path, { headers: { 'sign-in-with-x': header } });
      const copy = await ctx.http(path, { headers: { 'sign-in-with-x': header } });
      return {
        observed: `buyer ${describe(first)}; copy ${describe(copy)}`,
        ok: first.status === 200 && rows(first) > 0 && copy.status === 401 && rows(copy) === 0,
      };
    },
  },
  {
    name: 'an expired sign-in (an old header found in a log) reads nothing',
    expected: '401 sign-in-with-x expired, 0 rows',
    fast: true,
    async run(ctx) {
      const buyer = ctx.account('siwx-expired');
      const path = await buys(ctx, buyer);
      const info = await proposed(ctx, path);
      const now = Date.now();
      const old = {
        ...info,
        issuedAt: new Date(now - 900_000).toISOString(),
        expirationTime: new Date(now - 600_000).toISOString(),
      };
      const a = await ctx.http(path, {
        headers: { 'sign-in-with-x': await sign(old, buyer, `${ctx.baseUrl}${path}`) },
      });
      return { observed: describe(a), ok: a.status === 401 && rows(a) === 0 };
    },
  },
  {
    name: "a wallet with no entitlement signs in validly, or signs for the buyer's address",
    expected:
      'own address: 402 with paid_through 0, 0 rows; claiming the buyer: 401 signature verification failed, 0 rows',
    fast: true,
    async run(ctx) {
      const buyer = ctx.account('siwx-entitled');
      const path = await buys(ctx, buyer);
      const url = `${ctx.baseUrl}${path}`;
      const own = await ctx.http(path, {
        headers: { 'sign-in-with-x': await sign(await proposed(ctx, path), ctx.accounts.attacker, url) },
      });
      const claimed = JSON.parse(
        Buffer.from(await sign(await proposed(ctx, path), ctx.accounts.attacker, url), 'base64').toString(),
      );
      claimed.address = buyer.address;
      const forged = await ctx.http(path, {
        headers: { 'sign-in-with-x': Buffer.from(JSON.stringify(claimed)).toString('base64') },
      });
      return {
        observed: `own ${describe(own)} paid_through ${own.json?.paid_through}; claiming the buyer ${describe(forged)}`,
        ok:
          own.status === 402 &&
          own.json?.paid_through === 0 &&
          rows(own) === 0 &&
          forged.status === 401 &&
          rows(forged) === 0,
      };
    },
  },
];

cases.push(
  {
    name: 'a valid sign-in sent with HEAD spends nothing: its nonce still reads with GET',
    expected: 'HEAD: 402 (the sign-in ignored, 0 rows); the same header with GET afterwards: 200 with rows',
    fast: true,
    async run(ctx) {
      const buyer = ctx.account('siwx-head');
      const path = await buys(ctx, buyer);
      const header = await sign(await proposed(ctx, path), buyer, `${ctx.baseUrl}${path}`);
      const head = await ctx.http(path, { method: 'HEAD', headers: { 'sign-in-with-x': header } });
      const get = await ctx.http(path, { headers: { 'sign-in-with-x': header } });
      return {
        observed: `HEAD ${head.status}; GET afterwards ${describe(get)}`,
        ok: head.status === 402 && get.status === 200 && rows(get) > 0,
      };
    },
  },
  {
    name: 'HEAD with a forged sign-in shares the address budget with GET',
    expected: 'with a burst of 5: the GET burst spent, then 20 HEADs: all 429, none verified (0 answered 401)',
    fast: false,
    async run(ctx) {
      const s = await ctx.startServer({ RATE_LIMIT_ADDRESS_PER_MIN: '6', RATE_LIMIT_ADDRESS_BURST: '5' });
      const forged = Buffer.from('{"junk":true}').toString('base64');
      const path = `/v1/signals?city=${ctx.city}`;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await ctx.http(path, { base: s.baseUrl, headers: { 'sign-in-with-x': forged } })).status);
      const heads: number[] = [];
      for (let i = 0; i < 20; i++)
        heads.push(
          (await ctx.http(path, { base: s.baseUrl, method: 'HEAD', headers: { 'sign-in-with-x': forged } })).status,
        );
      const count = (xs: number[], v: number) => xs.filter((x) => x === v).length;
      return {
        observed: `GET burst: ${count(statuses, 401)}x401; HEADs after it: ${count(heads, 429)}x429, ${count(heads, 401)}x401, ${count(heads, 402)}x402`,
        ok: count(heads, 429) === 20,
      };
    },
  },
);

cases.push({
  name: "one cheap token held from many connections fills only its wallet's share of the long-poll pool",
  expected:
    'MAX_SIGNAL_WAITERS 60: the cheap token holds 4 (its share), its other 16 waits answer 503; a paying buyer is then held (200 after its wait)',
  fast: false,
  async run(ctx) {
    const s = await ctx.startServer({ MAX_SIGNAL_WAITERS: '60', RATE_LIMIT_ADDRESS_PER_MIN: '0' });
    const buy = async (who: PrivateKeyAccount) => {
      const path = `/v1/subscribe?city=${ctx.city}&count=2`;
      const c = await ctx.http(path, { base: s.baseUrl, method: 'POST' });
      const p = await payFor402(c.json, who, { nowMs: Date.now() });
      const b = await ctx.http(path, { base: s.baseUrl, method: 'POST', headers: { 'x-payment': p.xPayment } });
      return b.json.receiptToken as string;
    };
    const cheap = await buy(ctx.account('pool-cheap'));
    // Past the latest signal, inside the bundle: every one of these is a hold.
    const held = (token: string, wait: number) =>
      fetch(`${s.baseUrl}/v1/signals?city=${ctx.city}&since=${ctx.seededSignals}&wait=${wait}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(30_000),
      });
    const flood = Array.from({ length: 20 }, () => held(cheap, 3));
    await new Promise((r) => setTimeout(r, 500));
    const payer = await buy(ctx.account('pool-payer'));
    const theirs = await held(payer, 1);
    const statuses = await Promise.all(flood.map(async (p) => (await p).status));
    const n = (v: number) => statuses.filter((x) => x === v).length;
    return {
      observed: `cheap token: ${n(200)} held (200), ${n(503)} answered 503; paying buyer: ${theirs.status}`,
      ok: n(503) > 0 && n(200) <= 4 && theirs.status === 200,
    };
  },
});
