import type { PrivateKeyAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { x402HTTPClient } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { AttackCase, AttackContext, HttpAnswer } from './types.ts';

/**
 * The standard x402 v2 `exact` path (issue 36 item 1): a PAYMENT-SIGNATURE with a random nonce,
 * signed by @x402/evm's own client, binds to its bundle the first time it is seen. What can anyone
 * holding such a header (intercepted, or rebuilt from the chain once settled) make the server do?
 * The chain-only case (a random nonce used up on chain first) is in test/chain/stock-clients.test.ts.
 */
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));

/** A stock PAYMENT-SIGNATURE for a fresh 402 of `path` (as @x402/core's README builds it). */
async function stockHeader(ctx: AttackContext, path: string, account: PrivateKeyAccount, method = 'GET') {
  const http = new x402HTTPClient(new x402Client().register('eip155:*', new ExactEvmScheme(account)));
  const challenge = await ctx.http(path, { method });
  if (challenge.status !== 402) throw new Error(`challenge answered ${challenge.status}`);
  const required = http.getPaymentRequiredResponse((n) => challenge.headers.get(n), challenge.json);
  return http.encodePaymentSignatureHeader(await http.createPaymentPayload(required))['PAYMENT-SIGNATURE']!;
}

const rows = (a: HttpAnswer) => (Array.isArray(a.json?.signals) ? a.json.signals.length : 0);
const token = (a: HttpAnswer) => a.headers.get('x-receipt-token') !== null || typeof a.json?.receiptToken === 'string';
const describe = (a: HttpAnswer) =>
  `${a.status}${a.json?.error ? ` "${String(a.json.error).slice(0, 40)}"` : ''}${a.json?.idempotent ? ' idempotent' : ''}, ${rows(a)} rows${token(a) ? ', a receipt token' : ''}`;
const credited = (a: HttpAnswer) => a.status === 200 && (rows(a) > 0 || a.json?.idempotent === false);

/** Another city of the shared server at the same price (any served slug: the seeded one has rows). */
const OTHER_CITY = 'london';

export const cases: AttackCase[] = [
  {
    name: 'v2 random nonce: a settled header replayed on another bundle of the same price is refused',
    expected: '402 binding mismatch on subscribe and inline read, 0 rows, no receipt token, no second credit',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('v2-other-bundle');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const header = await stockHeader(ctx, path, victim);
      const own = await ctx.http(path, { headers: { 'payment-signature': header } });
      if (rows(own) === 0) return { observed: `the victim's own purchase: ${describe(own)}`, ok: false };
      const out: string[] = [];
      let ok = true;
      for (const [method, p] of [
        ['POST', `/v1/subscribe?city=${OTHER_CITY}&count=20`],
        ['GET', `/v1/signals?city=${OTHER_CITY}&since=0&count=20`],
      ] as const) {
        const a = await ctx.http(p, { method, headers: { 'payment-signature': header } });
        out.push(`${method} ${p.split('?')[0]} ${OTHER_CITY}: ${describe(a)}`);
        ok &&= a.status === 402 && a.json?.error?.startsWith('payment binding mismatch') && !token(a) && rows(a) === 0;
      }
      return { observed: out.join('; '), ok };
    },
  },
  {
    name: 'v2 random nonce: the public fields of a settled authorization (real or zero signature) read nothing on its own bundle',
    expected: '402 idempotent (inline) or 200 idempotent without receiptToken (subscribe), 0 rows',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('v2-public-copy');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const header = await stockHeader(ctx, path, victim);
      const own = await ctx.http(path, { headers: { 'payment-signature': header } });
      if (rows(own) === 0) return { observed: `the victim's own purchase: ${describe(own)}`, ok: false };
      const out: string[] = [];
      let ok = true;
      for (const sig of ['real', 'zero'] as const) {
        const j = unb64(header);
        if (sig === 'zero') j.payload.signature = `0x${'00'.repeat(65)}`;
        j.payload.authorization.validBefore = '1';
        for (const [method, p] of [
          ['GET', path],
          ['POST', `/v1/subscribe?city=${ctx.city}&count=20`],
        ] as const) {
          const a = await ctx.http(p, { method, headers: { 'payment-signature': b64(j) } });
          out.push(`${sig} ${method}: ${describe(a)}`);
          ok &&= rows(a) === 0 && !token(a) && !credited(a);
        }
      }
      return { observed: out.join('; '), ok };
    },
  },
  {
    name: 'v2 random nonce: one header sent to four bundles at once credits exactly one',
    expected: 'one 200 (credited), the rest 402 binding mismatch or the idempotent state',
    fast: true,
    async run(ctx) {
      const payer = ctx.account('v2-race');
      const header = await stockHeader(ctx, `/v1/subscribe?city=${ctx.city}&count=20`, payer, 'POST');
      const paths = [ctx.city, OTHER_CITY, 'paris', 'tokyo'].map((c) => `/v1/subscribe?city=${c}&count=20`);
      const answers = await Promise.all(
        paths.map((p) => ctx.http(p, { method: 'POST', headers: { 'payment-signature': header } })),
      );
      const n = answers.filter(credited).length;
      return { observed: `${n} credited; ${answers.map(describe).join('; ')}`, ok: n === 1 };
    },
  },
  {
    name: 'v2: accepted naming another price, token or payee than the request offers is refused',
    expected: '402 payment verification failed naming accepted.<field>; nothing settled',
    fast: true,
    async run(ctx) {
      const payer = ctx.account('v2-accepted');
      const path = `/v1/subscribe?city=${ctx.city}&count=20`;
      const header = await stockHeader(ctx, path, payer, 'POST');
      const out: string[] = [];
      let ok = true;
      for (const [field, value] of [
        ['amount', '1'],
        ['asset', `0x${'34'.repeat(20)}`],
        ['payTo', `0x${'12'.repeat(20)}`],
      ] as const) {
        const j = unb64(header);
        j.accepted[field] = value;
        const a = await ctx.http(path, { method: 'POST', headers: { 'payment-signature': b64(j) } });
        out.push(`${field}: ${a.status} ${a.json?.reason ?? ''}`);
        ok &&= a.status === 402 && String(a.json?.reason).includes(`accepted.${field}`);
      }
      // The untouched header still pays: nothing above used it up.
      const good = await ctx.http(path, { method: 'POST', headers: { 'payment-signature': header } });
      out.push(`untouched: ${describe(good)}`);
      return { observed: out.join('; '), ok: ok && credited(good) };
    },
  },
  {
    name: 'v2 with V2_NONCE=bound: a random nonce is refused as the seed refuses it',
    expected: '402 payment binding mismatch, nothing settled',
    fast: false,
    async run(ctx) {
      const server = await ctx.startServer({ V2_NONCE: 'bound' });
      const path = `/v1/subscribe?city=${ctx.city}&count=20`;
      const http = new x402HTTPClient(
        new x402Client().register('eip155:*', new ExactEvmScheme(ctx.account('v2-bound'))),
      );
      const challenge = await ctx.http(path, { method: 'POST', base: server.baseUrl });
      const required = http.getPaymentRequiredResponse((n) => challenge.headers.get(n), challenge.json);
      const header = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
      const a = await ctx.http(path, { method: 'POST', base: server.baseUrl, headers: header });
      return {
        observed: describe(a),
        ok: a.status === 402 && String(a.json?.error).startsWith('payment binding mismatch'),
      };
    },
  },
];
