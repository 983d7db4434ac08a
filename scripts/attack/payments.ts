import type { PrivateKeyAccount } from 'viem/accounts';
import { payFor402 } from '../../src/buyer/pay.ts';
import type { AttackCase, AttackContext, HttpAnswer } from './types.ts';

/**
 * Payment-plane attacks (issue 23 items 1, 5 and 10): what anyone can do with the public fields of
 * a settled authorization (from, to, value, nonce and the signature's v, r, s are all in the
 * transfer's calldata), and what a receipt signature given to one deployment is worth elsewhere.
 */
const ZERO_SIGNATURE = `0x${'00'.repeat(65)}`;

/** The victim buys `count` of the seeded city inline on GET /v1/signals; returns its header and answer. */
async function victimBuysInline(ctx: AttackContext, victim: PrivateKeyAccount, count = 20) {
  const path = `/v1/signals?city=${ctx.city}&since=0&count=${count}`;
  const challenge = await ctx.http(path);
  if (challenge.status !== 402) throw new Error(`challenge answered ${challenge.status}`);
  const p = await payFor402(challenge.json, victim, { nowMs: Date.now() });
  const bought = await ctx.http(path, { headers: { 'x-payment': p.xPayment } });
  if (bought.status !== 200)
    throw new Error(`the victim's own purchase answered ${bought.status} ${bought.text.slice(0, 120)}`);
  return { xPayment: p.xPayment, bought, path };
}

/** What an attacker rebuilds from the chain: the public fields, `validBefore=1`, the given signature. */
function publicCopy(xPayment: string, signature: 'zero' | 'real'): string {
  const j = JSON.parse(Buffer.from(xPayment, 'base64').toString('utf8'));
  if (signature === 'zero') j.payload.signature = ZERO_SIGNATURE;
  j.payload.authorization.validBefore = '1';
  delete j.payload.salt;
  return Buffer.from(JSON.stringify(j)).toString('base64');
}

const rows = (a: HttpAnswer) => (Array.isArray(a.json?.signals) ? a.json.signals.length : 0);
const token = (a: HttpAnswer) => a.headers.get('x-receipt-token') !== null || typeof a.json?.receiptToken === 'string';
const describe = (a: HttpAnswer) =>
  `${a.status}, ${rows(a)} rows${token(a) ? ', a receipt token' : ''}${a.headers.get('x-payment-response') ? ', X-PAYMENT-RESPONSE' : ''}`;

function inlineReplay(signature: 'zero' | 'real'): AttackCase {
  return {
    name: `inline replay of a settled authorization (${signature === 'zero' ? 'all-zero' : "the victim's real"} signature) reads nothing`,
    expected: '402 (idempotent, paid_through, latest), 0 rows, no receipt token',
    fast: true,
    async run(ctx) {
      const victim = ctx.account(`inline-replay-${signature}`);
      const { xPayment, path } = await victimBuysInline(ctx, victim);
      const a = await ctx.http(path, { headers: { 'x-payment': publicCopy(xPayment, signature) } });
      return { observed: describe(a), ok: a.status === 402 && rows(a) === 0 && !token(a) };
    },
  };
}

export const cases: AttackCase[] = [
  inlineReplay('zero'),
  inlineReplay('real'),
  {
    name: 'the forged header on POST /v1/subscribe grants no read',
    expected: '200 idempotent state without receiptToken (or a refusal); nothing returned reads',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('subscribe-forged');
      const { xPayment } = await victimBuysInline(ctx, victim);
      const out: string[] = [];
      let ok = true;
      for (const sig of ['zero', 'real'] as const) {
        const a = await ctx.http(`/v1/subscribe?city=${ctx.city}&count=20`, {
          method: 'POST',
          headers: { 'x-payment': publicCopy(xPayment, sig) },
        });
        const t = typeof a.json?.receiptToken === 'string' ? a.json.receiptToken : null;
        let reads = 0;
        if (t)
          reads = rows(
            await ctx.http(`/v1/signals?city=${ctx.city}&since=0`, { headers: { authorization: `Bearer ${t}` } }),
          );
        out.push(
          `${sig} signature: ${a.status}${a.json?.idempotent ? ' idempotent' : ''}${t ? `, receiptToken reading ${reads} rows` : ', no receiptToken'}`,
        );
        if (t) ok = false;
      }
      return { observed: out.join('; '), ok };
    },
  },
  {
    name: 'copies sent at the same time as the victim’s own request: only one reads',
    expected: 'of 6 simultaneous identical requests, exactly 1 answers rows and a token',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('coalesced');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const challenge = await ctx.http(path);
      const p = await payFor402(challenge.json, victim, { nowMs: Date.now() });
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => ctx.http(path, { headers: { 'x-payment': p.xPayment } })),
      );
      const reading = answers.filter((a) => rows(a) > 0).length;
      const tokens = answers.filter(token).length;
      return {
        observed: `${reading} of 6 read rows, ${tokens} got a token (statuses ${answers.map((a) => a.status).join(',')})`,
        ok: reading === 1 && tokens === 1,
      };
    },
  },
  {
    name: 'an applied X-Payment again with since >= paid_through (spec 4.4 rule 4)',
    expected: '402 exhaustion with paid_through and latest',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('exhaustion');
      const { xPayment, bought } = await victimBuysInline(ctx, victim, 2);
      const since = bought.json.paid_through as number;
      const a = await ctx.http(`/v1/signals?city=${ctx.city}&since=${since}&count=2`, {
        headers: { 'x-payment': xPayment },
      });
      return {
        observed: `${a.status} ${a.json?.error ?? ''}; paid_through ${a.json?.paid_through}, latest ${a.json?.latest}`,
        ok: a.status === 402 && a.json?.paid_through === since && typeof a.json?.latest === 'number',
      };
    },
  },
];
