import { addressKey, normalizeIp, type TrustedProxies } from './client-address.ts';

/**
 * Open connections per client, keyed like the request limits: a slowloris holds sockets, not
 * requests per minute, so the token bucket never sees it. TRUSTED_PROXIES are not capped: the
 * socket says nothing about the client then; the proxy's own limit (nginx `limit_conn`) belongs there.
 */
export type ConnectionCap = ReturnType<typeof createConnectionCap>;

export function createConnectionCap(settings: { max: number; trustedProxies: TrustedProxies }) {
  const held = new Map<string, number>();
  return {
    /** Counts a new connection; not ok when its client already holds `max` (the caller refuses it). */
    open(remoteAddress: string | undefined): { ok: boolean; key: string | null } {
      // max 0: off. No address: the socket is already gone; Node closes it.
      if (settings.max === 0 || remoteAddress === undefined) return { ok: true, key: null };
      if (!settings.trustedProxies.empty && settings.trustedProxies.has(normalizeIp(remoteAddress)))
        return { ok: true, key: null };
      const key = addressKey(remoteAddress);
      const n = held.get(key) ?? 0;
      if (n >= settings.max) return { ok: false, key: null };
      held.set(key, n + 1);
      return { ok: true, key };
    },
    close(key: string | null): void {
      if (key === null) return;
      const n = (held.get(key) ?? 1) - 1;
      if (n <= 0) held.delete(key);
      else held.set(key, n);
    },
    /** Clients holding at least one counted connection (bounded by the sockets the server holds). */
    size: () => held.size,
  };
}
