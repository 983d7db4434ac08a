import { rateLimited } from '../lib/api-errors.ts';
import type { ApiError } from '../lib/errors.ts';
import { replyJsonBytes } from '../lib/http.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createRateLimiter, type RateLimiter } from '../lib/rate-limit.ts';
import { clientKey, parseTrustedProxies } from './client-address.ts';

/**
 * Abuse limits (docs/decisions.md "Rate limits"): per client address before any signature recovery,
 * per wallet once one is named, test messages per chat, wallet and address. 0 per minute is off.
 */
interface LimitSettings {
  RATE_LIMIT_ADDRESS_PER_MIN: number;
  RATE_LIMIT_ADDRESS_BURST: number;
  RATE_LIMIT_WALLET_PER_MIN: number;
  RATE_LIMIT_WALLET_BURST: number;
  TEST_MESSAGES_PER_HOUR: number;
  TEST_MESSAGES_BURST: number;
  TRUSTED_PROXIES?: string | undefined;
}

type LimitKind = 'address' | 'wallet' | 'test_message_chat' | 'test_message_wallet' | 'test_message_address';

const POSTS_LIMITED = new Set(['/v1/subscribe', '/v1/receipts', '/v1/receipts/revoke', '/v1/delivery/messenger']);

/** A read is limited when it carries a payment or a sign-in (a signature recovery), HEAD as GET. */
export function limitedRoute(method: string, path: string, hasPayment: () => boolean): string | null {
  if (method === 'POST') return POSTS_LIMITED.has(path) ? path : null;
  if ((method === 'GET' || method === 'HEAD') && path === '/v1/signals' && hasPayment()) return '/v1/signals';
  return null;
}

export type AbuseLimits = ReturnType<typeof abuseLimitsFromConfig>;

export function abuseLimitsFromConfig(
  config: LimitSettings,
  deps: { now: () => number; disclaimer: string; metrics?: Metrics },
) {
  const trustedProxies = parseTrustedProxies(config.TRUSTED_PROXIES);
  const limiter = (perMinute: number, burst: number) => createRateLimiter({ perMinute, burst });
  const byAddress = limiter(config.RATE_LIMIT_ADDRESS_PER_MIN, config.RATE_LIMIT_ADDRESS_BURST);
  const byWallet = limiter(config.RATE_LIMIT_WALLET_PER_MIN, config.RATE_LIMIT_WALLET_BURST);
  const testByChat = limiter(config.TEST_MESSAGES_PER_HOUR / 60, config.TEST_MESSAGES_BURST);
  const testByWallet = limiter(config.TEST_MESSAGES_PER_HOUR / 60, config.TEST_MESSAGES_BURST);
  // Per client address too: fresh wallets cost nothing to make, so without it one client could
  // fill the shared test lane (2 a second) and make everyone else's test message wait past its
  // 5 s limit (a 502). Twice the wallet budget lets a household register a few chats, yet its
  // burst stays at 6 slots of the lane: 3 s, under the 5 s a test message waits.
  const testByAddress = limiter((2 * config.TEST_MESSAGES_PER_HOUR) / 60, 2 * config.TEST_MESSAGES_BURST);
  const refused = deps.metrics?.counter(
    'isocast_rate_limited_total',
    'Requests refused with 429 by the abuse limits, by limit and route',
  );

  const refuse = (kind: LimitKind, route: string, retryAfterMs: number): ApiError => {
    refused?.inc({ limit: kind, route });
    return rateLimited(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  };
  const walletCheck = (route: string, wallet: string) => {
    const r = byWallet.take(`${route} ${wallet.toLowerCase()}`, deps.now());
    if (!r.ok) throw refuse('wallet', route, r.retryAfterMs);
  };
  // An IPv6 client is its /64 (client-address.ts). In-process app.request() has no socket: no
  // client address to budget.
  const addressOf = (peer: string | undefined, forwardedFor: () => string | null) =>
    peer === undefined ? null : clientKey(peer, trustedProxies.empty ? null : forwardedFor(), trustedProxies);

  return {
    /** For the app's fetch wrapper: a ready 429 for a limited route over its address budget, else null. */
    checkRequest(route: string, peer: string | undefined, forwardedFor: () => string | null): Response | null {
      const address = addressOf(peer, forwardedFor);
      if (address === null) return null;
      // One budget per address across the limited routes: a flood switching routes gains nothing.
      const r = byAddress.take(address, deps.now());
      if (r.ok) return null;
      const err = refuse('address', route, r.retryAfterMs);
      const body = JSON.stringify({ error: err.message, ...err.extra, disclaimer: deps.disclaimer });
      return replyJsonBytes(body, { status: 429, headers: err.headers });
    },
    // Per wallet; each throws a 429 ApiError. `payer`: a purchase (subscribe, inline-paid read).
    payer: (wallet: string) => walletCheck('payment', wallet),
    signIn: (wallet: string) => walletCheck('/v1/signals sign-in', wallet),
    receiptRecovery: (wallet: string) => walletCheck('/v1/receipts', wallet),
    registration: (wallet: string) => walletCheck('/v1/delivery/messenger', wallet),
    /** The chat's (canonical id), wallet's and address's budgets must all allow one; then each gives one. */
    testMessage(
      wallet: string,
      chatId: string,
      client: { peer: string | undefined; forwardedFor: () => string | null },
    ): void {
      const now = deps.now();
      const address = addressOf(client.peer, client.forwardedFor);
      const lanes: [RateLimiter, string, LimitKind][] = [
        [testByChat, chatId, 'test_message_chat'],
        [testByWallet, wallet.toLowerCase(), 'test_message_wallet'],
      ];
      if (address !== null) lanes.push([testByAddress, address, 'test_message_address']);
      for (const [limiter, key, kind] of lanes) {
        const r = limiter.peek(key, now);
        if (!r.ok) throw refuse(kind, '/v1/delivery/messenger', r.retryAfterMs);
      }
      for (const [limiter, key] of lanes) limiter.take(key, now);
    },
  };
}
