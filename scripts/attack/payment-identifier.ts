import type { PrivateKeyAccount } from 'viem/accounts';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { payFor402, signReceiptBody } from '../../packages/isocast-client/src/index.ts';
import {
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REVOCATION_PRIMARY_TYPE,
} from '../../packages/isocast-client/src/receipt-typed-data.ts';
import type { AttackCase, AttackContext, HttpAnswer } from './types.ts';

/**
 * x402 `payment-identifier` attacks (issue 28 item 3): an id is one payment's idempotency key.
 * Reusing it with another payment must not settle or read anything, and the public fields of a
 * settled authorization with a guessed (or no) id must not bring back the stored answer, which
 * holds the receipt token.
 */
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

/** A PAYMENT-SIGNATURE for a fresh 402 of `path`, with the server's extensions echoed and `id` added. */
async function v2Header(ctx: AttackContext, path: string, account: PrivateKeyAccount, id: string | null) {
  const challenge = await ctx.http(path);
  if (challenge.status !== 402) throw new Error(`challenge answered ${challenge.status}`);
  const required = JSON.parse(Buffer.from(challenge.headers.get('payment-required') ?? '', 'base64').toString());
  const p = await payFor402(challenge.json, account, { nowMs: Date.now() });
  const { salt: _echo, ...payload } = JSON.parse(Buffer.from(p.xPayment, 'base64').toString()).payload;
  const extensions = structuredClone(required.extensions);
  if (id) extensions['payment-identifier'].info.id = id;
  return { x402Version: 2, resource: required.resource, accepted: required.accepts[0], payload, extensions };
}

const rows = (a: HttpAnswer) => (Array.isArray(a.json?.signals) ? a.json.signals.length : 0);
const token = (a: HttpAnswer) => a.headers.get('x-receipt-token') !== null || typeof a.json?.receiptToken === 'string';
const describe = (a: HttpAnswer) =>
  `${a.status}${a.json?.error ? ` "${String(a.json.error).slice(0, 48)}"` : ''}, ${rows(a)} rows${token(a) ? ', a receipt token' : ''}`;

const idFor = (label: string) => `atk_${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;

export const cases: AttackCase[] = [
  {
    name: "the victim's payment identifier reused with the attacker's own payment is refused",
    expected: '409 payment identifier already used, 0 rows, no receipt token; the victim keeps its answer',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('pid-victim');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const id = idFor('reuse');
      const mine = await v2Header(ctx, path, victim, id);
      const bought = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      if (bought.status !== 200) throw new Error(`the victim's own purchase answered ${bought.status}`);
      const theirs = await v2Header(ctx, path, ctx.account('pid-attacker'), id);
      const a = await ctx.http(path, { headers: { 'payment-signature': b64(theirs) } });
      const victimAgain = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      const ok = a.status === 409 && rows(a) === 0 && !token(a) && victimAgain.status === 200 && rows(victimAgain) > 0;
      return { observed: `${describe(a)}; victim's retry ${describe(victimAgain)}`, ok };
    },
  },
  {
    name: 'the public fields of a settled payment with a guessed or no identifier do not bring back its stored answer',
    expected:
      '402 idempotent (0 rows, no token) on GET /v1/signals, 200 idempotent without receiptToken on POST /v1/subscribe',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('pid-guess');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const mine = await v2Header(ctx, path, victim, idFor('secret'));
      const bought = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      if (bought.status !== 200) throw new Error(`the victim's own purchase answered ${bought.status}`);
      const out: string[] = [];
      let ok = true;
      for (const guess of [null, idFor('guess'), '0000000000000000']) {
        // Everything but the id is on chain once the transfer is mined.
        const copy = structuredClone(mine);
        if (guess) copy.extensions['payment-identifier'].info.id = guess;
        else delete copy.extensions['payment-identifier'].info.id;
        const read = await ctx.http(path, { headers: { 'payment-signature': b64(copy) } });
        const sub = await ctx.http(`/v1/subscribe?city=${ctx.city}&count=20`, {
          method: 'POST',
          headers: { 'payment-signature': b64(copy) },
        });
        out.push(`${guess ? 'guessed id' : 'no id'}: read ${describe(read)}, subscribe ${describe(sub)}`);
        ok &&= read.status === 402 && rows(read) === 0 && !token(read) && sub.status === 200 && !token(sub);
      }
      return { observed: out.join('; '), ok };
    },
  },
];

/** What a copy of the database (a backup, the Litestream replica) says about the wallet's payment. */
function fromCopy(ctx: AttackContext, wallet: string): { nonce: string; payment_identifier: string | null } {
  const db = new Database(join(ctx.dataDir, 'isocast.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare('SELECT nonce, payment_identifier FROM payments WHERE payer = ? ORDER BY id DESC LIMIT 1')
      .get(wallet.toLowerCase()) as { nonce: string; payment_identifier: string | null };
  } finally {
    db.close();
  }
}

cases.push(
  {
    name: 'a database copy mints nothing: its payer, nonce and stored identifier with a forged or the real signature',
    expected:
      'all-zero signature (validBefore 1) or the real on-chain signature, with the stored identifier or even the true id: 402, 0 rows, no token',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('pid-dbcopy');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const mine = await v2Header(ctx, path, victim, idFor('dbcopy'));
      const bought = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      if (bought.status !== 200) throw new Error(`the victim's own purchase answered ${bought.status}`);
      const copy = fromCopy(ctx, victim.address);
      const out: string[] = [
        `stored identifier ${copy.payment_identifier === mine.extensions['payment-identifier'].info.id ? 'is the id in the clear' : 'is not the id'}`,
      ];
      let ok = true;
      // The true id too (as if it leaked): only the same signed payment opens its stored answer.
      const trueId = mine.extensions['payment-identifier'].info.id as string;
      const variants = [
        { label: 'zero signature, stored identifier', zero: true, id: copy.payment_identifier },
        { label: 'real signature, stored identifier', zero: false, id: copy.payment_identifier },
        { label: 'zero signature, the true id', zero: true, id: trueId },
      ];
      for (const v of variants) {
        const h = structuredClone(mine);
        if (v.zero) {
          h.payload.signature = `0x${'00'.repeat(65)}`;
          h.payload.authorization.validBefore = '1';
        }
        if (v.id) h.extensions['payment-identifier'].info.id = v.id;
        const a = await ctx.http(path, { headers: { 'payment-signature': b64(h) } });
        out.push(`${v.label}: ${describe(a)}`);
        ok &&= a.status !== 200 && rows(a) === 0 && !token(a);
      }
      return { observed: out.join('; '), ok };
    },
  },
  {
    name: 'after the wallet revokes its tokens, its own payment identifier replay brings back no token and no page',
    expected: 'before the revoke: 200 with the token; after it, the same header: 402, 0 rows, no token',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('pid-revoked');
      const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
      const mine = await v2Header(ctx, path, victim, idFor('revoked'));
      const bought = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      if (bought.status !== 200) throw new Error(`the victim's own purchase answered ${bought.status}`);
      const before = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      const body = await signReceiptBody(victim, {
        server: ctx.baseUrl,
        kind: RECEIPT_REVOCATION_PRIMARY_TYPE,
        timestampS: Math.floor(Date.now() / 1000),
      });
      const revoked = await ctx.http('/v1/receipts/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (revoked.status !== 200) throw new Error(`revoke answered ${revoked.status}`);
      const after = await ctx.http(path, { headers: { 'payment-signature': b64(mine) } });
      return {
        observed: `before the revoke: ${describe(before)}; after: ${describe(after)}`,
        ok: before.status === 200 && token(before) && after.status !== 200 && rows(after) === 0 && !token(after),
      };
    },
  },
);

/** A signed receipt body POSTed to `path` (`/v1/receipts` or `/v1/receipts/revoke`). */
async function receiptPost(ctx: AttackContext, who: PrivateKeyAccount, r: { path: string; timestampS: number }) {
  const kind = r.path.endsWith('/revoke') ? RECEIPT_REVOCATION_PRIMARY_TYPE : RECEIPT_REQUEST_PRIMARY_TYPE;
  const body = await signReceiptBody(who, { server: ctx.baseUrl, kind, timestampS: r.timestampS });
  return ctx.http(r.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

cases.push({
  name: 'receipt requests signed before a revocation, or dated far ahead, mint nothing after it',
  expected: 'signed 5 s before the revoke: 401; dated 590 s ahead (signed before it): 401 stale; signed after it: 200',
  fast: true,
  async run(ctx) {
    const victim = ctx.account('receipt-gap');
    const path = `/v1/signals?city=${ctx.city}&since=0&count=20`;
    const bought = await ctx.http(path, {
      headers: { 'payment-signature': b64(await v2Header(ctx, path, victim, null)) },
    });
    if (bought.status !== 200) throw new Error(`the victim's own purchase answered ${bought.status}`);
    const now = Math.floor(Date.now() / 1000);
    const revoked = await receiptPost(ctx, victim, { path: '/v1/receipts/revoke', timestampS: now });
    if (revoked.status !== 200) throw new Error(`revoke answered ${revoked.status}`);
    const before = await receiptPost(ctx, victim, { path: '/v1/receipts', timestampS: now - 5 });
    const ahead = await receiptPost(ctx, victim, { path: '/v1/receipts', timestampS: now + 590 });
    await new Promise((r) => setTimeout(r, 1_100));
    const after = await receiptPost(ctx, victim, { path: '/v1/receipts', timestampS: Math.floor(Date.now() / 1000) });
    const d = (a: HttpAnswer) => `${a.status}${a.json?.receiptToken ? ' with a token' : ` "${a.json?.error}"`}`;
    return {
      observed: `5 s before: ${d(before)}; 590 s ahead: ${d(ahead)}; after: ${d(after)}`,
      ok: before.status === 401 && ahead.status === 401 && after.status === 200,
    };
  },
});

cases.push({
  name: 'two payment headers are refused with 400, and junk around base64 is not skipped',
  expected:
    'two X-Payment headers: 400 naming the rule, nothing settled; a valid header with junk characters inside: 402 malformed, nothing settled',
  fast: true,
  async run(ctx) {
    const path = `/v1/subscribe?city=${ctx.city}&count=2`;
    const pay = async (label: string) => {
      const c = await ctx.http(path, { method: 'POST' });
      return (await payFor402(c.json, ctx.account(label), { nowMs: Date.now() })).xPayment;
    };
    const [a, b] = [await pay('dup-a'), await pay('dup-b')];
    const headers = new Headers();
    headers.append('x-payment', a);
    headers.append('x-payment', b);
    const two = await ctx.http(path, { method: 'POST', headers });
    const junk = `${a.slice(0, 8)}!*${a.slice(8)}`;
    const j = await ctx.http(path, { method: 'POST', headers: { 'x-payment': junk } });
    return {
      observed: `two headers: ${two.status} "${two.json?.error}"; junk inside: ${j.status} "${j.json?.reason ?? j.json?.error}"`,
      ok: two.status === 400 && j.status === 402 && j.json?.paidThroughSeq === undefined,
    };
  },
});
