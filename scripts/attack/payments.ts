import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createClient } from '../../src/buyer/cli/client.ts';
import { recoverReceipts } from '../../src/buyer/cli/receipts.ts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { openDb } from '../../src/db/open.ts';
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

/**
 * A lookalike server the buyer's own client was pointed at: it records every signed receipt body
 * it receives and answers each with `answer` (e.g. "signature already used", to bait a re-sign).
 */
async function lookalike(answer: { status: number; body: Record<string, unknown> }) {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      if (req.method === 'POST' && req.url?.startsWith('/v1/receipts')) bodies.push(JSON.parse(raw || '{}'));
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...answer.body, disclaimer: 'lookalike' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The buyer's `isocast receipt` recovery code, pointed at `server`; errors are the client's business. */
async function buyerRecovers(server: string, victim: PrivateKeyAccount): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-attack-buyer-'));
  try {
    await recoverReceipts(createClient(server, 5_000), victim, {
      file: join(dir, 'receipts.json'),
      nowMs: Date.now(),
    }).catch(() => null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function victimSubscribes(ctx: AttackContext, victim: PrivateKeyAccount) {
  const path = `/v1/subscribe?city=${ctx.city}&count=2`;
  const challenge = await ctx.http(path, { method: 'POST' });
  const p = await payFor402(challenge.json, victim, { nowMs: Date.now() });
  const bought = await ctx.http(path, { method: 'POST', headers: { 'x-payment': p.xPayment } });
  if (bought.status !== 200) throw new Error(`the victim's purchase answered ${bought.status}`);
  return bought.json.receiptToken as string;
}

const postJson = (ctx: AttackContext, path: string, body: unknown) =>
  ctx.http(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

cases.push(
  {
    name: 'a receipt signature the buyer gave a lookalike server mints no token on the real one',
    expected: '401 signature verification failed; no token',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('lookalike-victim');
      await victimSubscribes(ctx, victim);
      const fake = await lookalike({ status: 503, body: { error: 'try later' } });
      try {
        await buyerRecovers(fake.url, victim);
      } finally {
        await fake.close();
      }
      if (fake.bodies.length === 0) return { observed: 'the buyer signed nothing for the lookalike', ok: true };
      const a = await postJson(ctx, '/v1/receipts', fake.bodies[0]);
      const minted = typeof a.json?.receiptToken === 'string';
      return {
        observed: `${a.status} ${a.json?.error ?? ''}${minted ? '; a bearer token for the victim' : ''}`,
        ok: a.status === 401 && !minted,
      };
    },
  },
  {
    name: 'a lookalike answering "signature already used" gets no second signature',
    expected: 'the buyer client signs once and stops',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('already-used-victim');
      const fake = await lookalike({ status: 401, body: { error: 'signature already used' } });
      try {
        await buyerRecovers(fake.url, victim);
      } finally {
        await fake.close();
      }
      return { observed: `${fake.bodies.length} signed request(s) sent`, ok: fake.bodies.length <= 1 };
    },
  },
  {
    name: 'a receipt token older than RECEIPT_TTL_DAYS (90) reads nothing',
    expected: '401 receipt token expired (recovery hint)',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('expired-token');
      const token = await victimSubscribes(ctx, victim);
      // Age the token as 91 days would: the server's own row, moved back in time.
      const db = openDb(join(ctx.dataDir, 'isocast.db'), { migrate: false });
      try {
        db.prepare('UPDATE receipts SET created_at = created_at - ? WHERE wallet = ?').run(
          91 * 86_400_000,
          victim.address.toLowerCase(),
        );
      } finally {
        db.close();
      }
      const a = await ctx.http(`/v1/signals?city=${ctx.city}&since=0`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return { observed: `${a.status} ${a.json?.error ?? ''}; ${rows(a)} rows`, ok: a.status === 401 && rows(a) === 0 };
    },
  },
  {
    name: 'a wallet revokes all its receipt tokens with one signed request',
    expected: '200 revoked n; the old tokens read nothing; the same signature again is refused',
    fast: true,
    async run(ctx) {
      const victim = ctx.account('revoking-wallet');
      const token = await victimSubscribes(ctx, victim);
      const timestamp = Math.floor(Date.now() / 1000);
      // Written out here (not imported) so the case runs against builds that predate revocation.
      const fields = [
        { name: 'wallet', type: 'address' },
        { name: 'origin', type: 'string' },
        { name: 'timestamp', type: 'uint256' },
      ] as const;
      const signature = await victim.signTypedData({
        domain: { name: 'Isocast', version: '1', chainId: 8453 },
        types: { ReceiptRevocation: fields },
        primaryType: 'ReceiptRevocation',
        message: { wallet: victim.address, origin: ctx.origin, timestamp: BigInt(timestamp) },
      });
      const body = { wallet: victim.address, origin: ctx.origin, timestamp, signature };
      const r = await postJson(ctx, '/v1/receipts/revoke', body);
      const after = await ctx.http(`/v1/signals?city=${ctx.city}&since=0`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const replay = await postJson(ctx, '/v1/receipts/revoke', body);
      return {
        observed: `revoke ${r.status}${r.json?.revoked !== undefined ? ` (revoked ${r.json.revoked})` : ''}; old token then ${after.status} with ${rows(after)} rows; replay ${replay.status}`,
        ok: r.status === 200 && rows(after) === 0 && after.status !== 200 && replay.status === 401,
      };
    },
  },
);
