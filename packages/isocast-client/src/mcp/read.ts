import type { Account } from 'viem';
import { ReceiptError, recoverReceipt } from '../receipts.ts';
import { type Api, failureOf, ToolFailure } from './api.ts';

/**
 * read_signals: the entitled rows after `since`. The bearer is the receipt token this process
 * holds (from a purchase, or recovered earlier); without one, or when the server no longer
 * accepts it (revoked, expired), the wallet signs a ReceiptRequest once (POST /v1/receipts: free,
 * no payment) for a fresh token. Tokens stay in memory: a restarted server signs in again.
 */
export type ReadContext = {
  api: Api;
  account: Account;
  nowMs(): number;
  token(): string | null;
  keepToken(token: string): void;
};

/** The server's longest hold of a read (payments/bundle.ts MAX_WAIT_S). */
export const MAX_WAIT_S = 25;

async function signIn(ctx: ReadContext): Promise<string> {
  try {
    const r = await recoverReceipt({ server: ctx.api.server, account: ctx.account, nowMs: ctx.nowMs() });
    ctx.keepToken(r.receiptToken);
    return r.receiptToken;
  } catch (err) {
    if (err instanceof ReceiptError && err.reason === 'no-purchases')
      throw new ToolFailure(`wallet ${ctx.account.address} has bought nothing at ${ctx.api.server}; buy_signals first`);
    throw new ToolFailure(`cannot sign in with the wallet: ${(err as Error).message}`);
  }
}

export async function readSignals(
  ctx: ReadContext,
  input: { city: string; since: number; wait: number },
): Promise<Record<string, unknown>> {
  const path = `/v1/signals?city=${encodeURIComponent(input.city)}&since=${input.since}${input.wait > 0 ? `&wait=${input.wait}` : ''}`;
  let token = ctx.token();
  let fresh = false;
  if (!token) {
    token = await signIn(ctx);
    fresh = true;
  }
  const get = (t: string) =>
    ctx.api.call('GET', path, { headers: { authorization: `Bearer ${t}` }, timeoutMs: (input.wait + 15) * 1000 });
  let a = await get(token);
  // A token the server no longer takes answers 401 (or a 402 that offers a purchase); one sign-in, once.
  if (!fresh && (a.status === 401 || a.status === 402)) a = await get(await signIn(ctx));
  if (a.status === 402)
    throw failureOf(`nothing to read for ${input.city} after seq ${input.since}; buy_signals buys more`, a);
  if (a.status !== 200) throw failureOf('cannot read the signals', a);
  const b = a.body;
  if (!Array.isArray(b.signals)) throw new ToolFailure('the server answered without a signals list');
  return {
    city: input.city,
    signals: b.signals,
    next_cursor: b.next_cursor,
    paid_through: b.paid_through,
    latest: b.latest,
    more: b.more === true,
  };
}
