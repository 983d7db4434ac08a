import type { Account } from 'viem';
import { ChallengeRefused, tierProblem } from '../guard.ts';
import { payFor402 } from '../pay.ts';
import { bundlePrice } from '../pricing.ts';
import { type Answer, type Api, failureOf, ToolFailure } from './api.ts';
import { addSpend, capProblem, loadSpend, saveSpend, spentOn, usd } from './spend.ts';

/**
 * buy_signals: the CLI's purchase (src/buyer/cli/buy.ts) for an agent. Nothing is signed unless
 * the daily cap leaves room for the bundle's price (computed here from the built-in tier table,
 * not taken from the server), the server publishes its settlement wallet and the built-in tier
 * table, and the 402 passes every check of checkChallenge (exact price, USDC on Base under its
 * real domain, the published payTo, the bound bundle, no control characters). Purchases run one
 * at a time, so two concurrent calls cannot both fit under the cap.
 */
export type BuyContext = {
  api: Api;
  account: Account;
  capMicro: number;
  spendFile: string;
  nowMs(): number;
  /** Where a receipt token from a purchase is kept for read_signals (memory only). */
  keepToken(token: string): void;
  sleep(ms: number): Promise<void>;
};

/** A 503 "settlement pending" is resent with the same header, a few times (an MCP call should not hang for minutes). */
const PENDING_RETRIES = 3;
const PENDING_MAX_WAIT_MS = 5_000;
/** Answers that say nothing was charged, so the reserved amount goes back under the cap. */
const NOT_CHARGED = new Set([400, 401, 402, 403, 404, 409, 422, 429]);

export const pending = (a: Pick<Answer, 'status' | 'body'>) =>
  a.status === 503 &&
  (/settlement pending/i.test(String(a.body.error)) || typeof a.body.retryAfterSeconds === 'number');

let queue: Promise<unknown> = Promise.resolve();
/** Runs purchases one after another in this process. */
function serially<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => {});
  return run;
}

export function buySignals(ctx: BuyContext, input: { city: string; count: number }): Promise<Record<string, unknown>> {
  return serially(() => buy(ctx, input));
}

async function publishedPayTo(ctx: BuyContext, city: string): Promise<string> {
  const meta = await ctx.api.call('GET', `/v1/signals/meta?city=${encodeURIComponent(city)}`);
  if (meta.status !== 200)
    throw failureOf('cannot read the price list (GET /v1/signals/meta); nothing was signed', meta);
  if (typeof meta.body.payTo !== 'string')
    throw new ToolFailure('the server publishes no settlement wallet (payTo); nothing was signed');
  const tiers = tierProblem(meta.body.tiers);
  if (tiers) throw new ToolFailure(`${tiers}; nothing was signed`);
  return meta.body.payTo;
}

async function buy(
  ctx: BuyContext,
  { city, count }: { city: string; count: number },
): Promise<Record<string, unknown>> {
  const priceMicro = bundlePrice(count).totalMicro;
  const refused = capProblem({
    state: loadSpend(ctx.spendFile),
    nowMs: ctx.nowMs(),
    capMicro: ctx.capMicro,
    priceMicro,
  });
  if (refused) throw new ToolFailure(refused);
  const payTo = await publishedPayTo(ctx, city);
  const path = `/v1/subscribe?city=${encodeURIComponent(city)}&count=${count}`;
  const challenge = await ctx.api.call('POST', path);
  if (challenge.status !== 402) throw failureOf('expected a 402 payment challenge; nothing was signed', challenge);
  const spent = spentOn(loadSpend(ctx.spendFile), ctx.nowMs());
  let payment: Awaited<ReturnType<typeof payFor402>>;
  try {
    payment = await payFor402(challenge.raw, ctx.account, {
      nowMs: ctx.nowMs(),
      expect: {
        city,
        count,
        payTo,
        maxAtomic: BigInt(Math.max(1, ctx.capMicro - spent)),
        capName: 'daily cap (ISOCAST_MAX_USD_PER_DAY)',
      },
    });
  } catch (err) {
    const why = err instanceof ChallengeRefused ? err.message : `cannot pay this challenge: ${(err as Error).message}`;
    throw new ToolFailure(`${why}; nothing was signed or sent`);
  }
  const amountMicro = Number(payment.amountAtomic);
  // Reserved before the header leaves: a crash or a lost answer counts as paid.
  saveSpend(ctx.spendFile, addSpend(loadSpend(ctx.spendFile), { nowMs: ctx.nowMs(), deltaMicro: amountMicro }));
  const release = () =>
    saveSpend(ctx.spendFile, addSpend(loadSpend(ctx.spendFile), { nowMs: ctx.nowMs(), deltaMicro: -amountMicro }));
  let paid: Answer;
  for (let attempt = 0; ; attempt++) {
    paid = await ctx.api
      .call('POST', path, { headers: { 'x-payment': payment.xPayment }, timeoutMs: 60_000 })
      .catch((err: Error) => {
        throw new ToolFailure(
          `${err.message}. The signed payment may have settled: read_signals will show it (it is counted against today's cap)`,
        );
      });
    if (!pending(paid) || attempt >= PENDING_RETRIES) break;
    await ctx.sleep(Math.min(PENDING_MAX_WAIT_MS, Math.max(1000, (paid.retryAfterS ?? 2) * 1000)));
  }
  if (paid.status !== 200) {
    if (NOT_CHARGED.has(paid.status) || (paid.status === 503 && !pending(paid))) {
      release();
      throw failureOf('payment refused; nothing was charged', paid);
    }
    if (pending(paid))
      throw new ToolFailure(
        'settlement still pending; the signed authorization can be charged at most once. read_signals will show it when it settles',
      );
    throw failureOf(paid.status === 502 ? 'payment taken but not applied; a refund is queued' : 'payment failed', paid);
  }
  const r = paid.body;
  if (typeof r.receiptToken === 'string' && r.receiptToken !== '') ctx.keepToken(r.receiptToken);
  // The server saw this authorization before: nothing was charged now.
  if (r.idempotent === true) release();
  const spentToday = spentOn(loadSpend(ctx.spendFile), ctx.nowMs());
  return {
    city,
    count: r.count ?? count,
    amountUsd: usd(amountMicro),
    amountMicroUsdc: amountMicro,
    payTo: payment.payTo,
    wallet: ctx.account.address,
    paidThroughSeq: r.paidThroughSeq,
    latestSeq: r.latestSeq,
    txHash: typeof r.txHash === 'string' ? r.txHash : null,
    idempotent: r.idempotent === true,
    spentTodayUsd: usd(spentToday),
    dailyCapUsd: usd(ctx.capMicro),
    ...(r.resolutionMetadata && typeof r.resolutionMetadata === 'object'
      ? { resolutionMetadata: r.resolutionMetadata }
      : {}),
    ...(challenge.body.extra?.mode === 'mock' ? { mockPayments: true } : {}),
  };
}
