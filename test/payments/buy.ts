import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import type { Account, Hex } from 'viem';
import { payFor402, type PayOptions, type Payment } from '../../packages/isocast-client/src/index.ts';

/** Shared buyer steps for payment tests: ask for the 402, sign it, send X-Payment. */
export const buyerA = privateKeyToAccount(`0x${'a1'.repeat(32)}` as Hex);
export const buyerB = privateKeyToAccount(`0x${'b2'.repeat(32)}` as Hex);

export type Fetcher = (path: string, init?: RequestInit) => Promise<Response>;

/** A fetcher over a real listening server. */
export const over =
  (base: string): Fetcher =>
  (path, init) =>
    fetch(`${base}${path}`, init);

/** A fetcher straight into the app (`app.request`): no port, for flows that need no socket. */
export const inApp =
  (app: { request(path: string, init?: RequestInit): Response | Promise<Response> }): Fetcher =>
  async (path, init) =>
    app.request(path, init);

export async function challenge(f: Fetcher, city: string, count: number): Promise<Record<string, unknown>> {
  const res = await f(`/v1/subscribe?city=${city}&count=${count}`, { method: 'POST' });
  assert.equal(res.status, 402);
  return (await res.json()) as Record<string, unknown>;
}

/** `opts.expect.usdc` names a test token (a local chain); the buyer refuses any other token by default. */
export async function signFor(
  f: Fetcher,
  account: Account,
  city: string,
  count: number,
  nowMs: number,
  opts: PayOptions = {},
): Promise<Payment> {
  return payFor402(await challenge(f, city, count), account, { ...opts, nowMs });
}

export async function subscribeWith(
  f: Fetcher,
  xPayment: string,
  city: string,
  count: number,
): Promise<{ status: number; body: Record<string, any>; res: Response }> {
  const res = await f(`/v1/subscribe?city=${city}&count=${count}`, {
    method: 'POST',
    headers: { 'x-payment': xPayment },
  });
  return { status: res.status, body: (await res.json()) as Record<string, any>, res };
}

export async function buy(
  f: Fetcher,
  account: Account,
  city: string,
  count: number,
  nowMs: number,
  opts: PayOptions = {},
) {
  const p = await signFor(f, account, city, count, nowMs, opts);
  return { payment: p, ...(await subscribeWith(f, p.xPayment, city, count)) };
}

/** Re-encodes an X-Payment after editing its decoded JSON (for tampering tests). */
export function tamper(xPayment: string, edit: (json: any) => void): string {
  const json = JSON.parse(Buffer.from(xPayment, 'base64').toString('utf8'));
  edit(json);
  return Buffer.from(JSON.stringify(json)).toString('base64');
}
