import { rateLimited } from '../lib/api-errors.ts';
import type { ApiError } from '../lib/errors.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createRateLimiter, type BucketLimit } from '../lib/rate-limit.ts';
import { clientKey, type TrustedProxies } from './client-address.ts';

/**
 * Abuse limits (docs/decisions.md, "Rate limits"). Per client address, checked before any
 * signature is recovered, on the routes where an unauthenticated request costs real work: a
 * subscribe, an inline-paid read, a receipt recovery, a chat registration. Per wallet, checked
 * once a signature names one, on the same routes. Chat registration test messages also have a
 * small budget of their own per chat and per wallet, because each one is a message the bot sends
 * to a chat nobody has paid for. Defaults sit far above what a buyer does, so in practice only a
 * flood meets them; 0 per minute turns a limit off.
 */
type AbuseSettings = {
  address: BucketLimit;
  wallet: BucketLimit;
  /** Registration test messages, per chat and per wallet. */
  testMessages: BucketLimit;
  /** Registration test messages per client address (from-config.ts: twice the per-wallet budget). */
  testMessagesPerAddress: BucketLimit;
  trustedProxies: TrustedProxies;
  maxKeys?: number;
};

type LimitKind = 'address' | 'wallet' | 'test_message_chat' | 'test_message_wallet' | 'test_message_address';

/**
 * The route label a request is limited under, or null for every other request. `hasPayment`: a
 * read carrying a payment header or a wallet sign-in (each costs a signature recovery on GET;
 * HEAD ignores both but spends the same budget, so it is never a way around it).
 */
export function limitedRoute(method: string, path: string, hasPayment: () => boolean): string | null {
  if (method === 'POST') {
    if (
      path === '/v1/subscribe' ||
      path === '/v1/receipts' ||
      path === '/v1/receipts/revoke' ||
      path === '/v1/delivery/messenger'
    )
      return path;
    return null;
  }
  // HEAD is answered by the GET route: the same budget, whatever it carries.
  if ((method === 'GET' || method === 'HEAD') && path === '/v1/signals' && hasPayment()) return '/v1/signals';
  return null;
}

export type AbuseLimits = ReturnType<typeof createAbuseLimits>;

export function createAbuseLimits(
  settings: AbuseSettings,
  deps: { now: () => number; disclaimer: string; metrics?: Metrics },
) {
  const opts = { maxKeys: settings.maxKeys ?? 100_000 };
  const byAddress = createRateLimiter(settings.address, opts);
  const byWallet = createRateLimiter(settings.wallet, opts);
  const testByChat = createRateLimiter(settings.testMessages, opts);
  const testByWallet = createRateLimiter(settings.testMessages, opts);
  // Per client address too: fresh wallets cost nothing to make, so without it one client could
  // fill the shared test lane (2 a second) and make everyone else's test message wait past its
  // 5 s limit (a 502). With this budget a client holds at most `burst` slots of the lane.
  const testByAddress = createRateLimiter(settings.testMessagesPerAddress, opts);
  const refused = deps.metrics?.counter(
    'isocast_rate_limited_total',
    'Requests refused with 429 by the abuse limits, by limit and route',
  );
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

  const refuse = (kind: LimitKind, route: string, retryAfterMs: number): ApiError => {
    refused?.inc({ limit: kind, route });
    const retryAfterSeconds = seconds(retryAfterMs);
    return rateLimited(retryAfterSeconds);
  };
  const walletCheck = (route: string, wallet: string) => {
    const r = byWallet.take(`${route} ${wallet.toLowerCase()}`, deps.now());
    if (!r.ok) throw refuse('wallet', route, r.retryAfterMs);
  };

  return {
    /**
     * For the app's fetch wrapper: a ready 429 for a limited route over its address budget, else
     * null. Synchronous and a no-op for every other request.
     */
    checkRequest(route: string, peer: string | undefined, forwardedFor: () => string | null): Response | null {
      if (peer === undefined) return null; // in-process app.request(): no socket, no client to limit
      // An IPv6 client is its /64 (client-address.ts, addressKey).
      const address = clientKey(peer, settings.trustedProxies.empty ? null : forwardedFor(), settings.trustedProxies);
      // One budget per address across the limited routes: a flood switching routes gains nothing.
      const r = byAddress.take(address, deps.now());
      if (r.ok) return null;
      const err = refuse('address', route, r.retryAfterMs);
      const body = JSON.stringify({ error: err.message, ...err.extra, disclaimer: deps.disclaimer });
      return new Response(body, {
        status: 429,
        headers: { 'content-type': 'application/json; charset=utf-8', ...err.headers },
      });
    },
    /** Per payer wallet on a purchase (subscribe, inline-paid read); throws a 429 ApiError. */
    payer: (wallet: string) => walletCheck('payment', wallet),
    /** Per wallet on a sign-in-with-x read (GET /v1/signals); throws a 429 ApiError. */
    signIn: (wallet: string) => walletCheck('/v1/signals sign-in', wallet),
    /** Per wallet on a receipt recovery (POST /v1/receipts); throws a 429 ApiError. */
    receiptRecovery: (wallet: string) => walletCheck('/v1/receipts', wallet),
    /** Per wallet on any chat registration request; throws a 429 ApiError. */
    registration: (wallet: string) => walletCheck('/v1/delivery/messenger', wallet),
    /**
     * The test message budget: the chat's (its canonical id), the wallet's and the client
     * address's must all allow one, and only then is one taken from each; throws a 429 ApiError.
     */
    testMessage(
      wallet: string,
      chatId: string,
      client: { peer: string | undefined; forwardedFor: () => string | null },
    ): void {
      const now = deps.now();
      const w = wallet.toLowerCase();
      // In-process app.request() has no socket: no client address to budget, as in checkRequest.
      const address =
        client.peer === undefined
          ? null
          : clientKey(
              client.peer,
              settings.trustedProxies.empty ? null : client.forwardedFor(),
              settings.trustedProxies,
            );
      const chat = testByChat.peek(chatId, now);
      if (!chat.ok) throw refuse('test_message_chat', '/v1/delivery/messenger', chat.retryAfterMs);
      const mine = testByWallet.peek(w, now);
      if (!mine.ok) throw refuse('test_message_wallet', '/v1/delivery/messenger', mine.retryAfterMs);
      if (address !== null) {
        const from = testByAddress.peek(address, now);
        if (!from.ok) throw refuse('test_message_address', '/v1/delivery/messenger', from.retryAfterMs);
        testByAddress.take(address, now);
      }
      testByChat.take(chatId, now);
      testByWallet.take(w, now);
    },
    /** For tests and /metrics: live buckets per limiter. */
    sizes: (): Record<string, number> => ({
      address: byAddress.size(),
      wallet: byWallet.size(),
      testChat: testByChat.size(),
      testWallet: testByWallet.size(),
      testAddress: testByAddress.size(),
    }),
  };
}
