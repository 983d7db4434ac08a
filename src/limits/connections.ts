import { addressKey, normalizeIp, type TrustedProxies } from './client-address.ts';

/**
 * Open connections per client (issue 23.9), keyed like the request limits (addressKey: an IPv6
 * client is its /64). A slowloris holds sockets open, not requests per minute, so the token bucket
 * never sees it; a cap on what one client holds at once does.
 *
 * Behind a reverse proxy every socket comes from the proxy, whose address says nothing about the
 * client, and X-Forwarded-For is not readable when the connection opens. So connections from a
 * TRUSTED_PROXIES address are not capped here: the proxy is where per-client connection limits
 * belong (nginx `limit_conn`), and the per-client request budgets still apply from its header.
 */
export type ConnectionCap = {
  /** Counts a new connection; false when its client already holds `max` (the caller refuses it). */
  open(remoteAddress: string | undefined): { ok: boolean; key: string | null };
  /** Uncounts a connection `open` accepted with this key. */
  close(key: string | null): void;
  /** Clients holding at least one counted connection (bounded by the sockets the server holds). */
  size(): number;
};

export function createConnectionCap(settings: { max: number; trustedProxies: TrustedProxies }): ConnectionCap {
  const held = new Map<string, number>();
  return {
    open(remoteAddress) {
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
    close(key) {
      if (key === null) return;
      const n = (held.get(key) ?? 1) - 1;
      if (n <= 0) held.delete(key);
      else held.set(key, n);
    },
    size: () => held.size,
  };
}
