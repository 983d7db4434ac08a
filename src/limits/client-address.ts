import { BlockList, isIP } from 'node:net';

/**
 * The address a request comes from. The socket's peer, unless that peer is one of the operator's
 * reverse proxies (TRUSTED_PROXIES: IPs and CIDRs); then the right-most `X-Forwarded-For` hop that
 * is not itself a trusted proxy. Hops left of it were written by the client and prove nothing,
 * so taking the left-most would let anyone pick their own rate-limit key.
 */
export type TrustedProxies = { has(address: string): boolean; readonly empty: boolean };

/** `::ffff:10.0.0.1` is the IPv4 peer as a dual-stack socket reports it. */
export function normalizeIp(address: string): string {
  const a = address.trim();
  return a.toLowerCase().startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** Parses a comma list of IPs and CIDRs; throws with the first entry that is neither. */
export function parseTrustedProxies(list: string | undefined): TrustedProxies {
  const blocks = new BlockList();
  const entries = (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [ip, prefix, extra] = entry.split('/');
    const family = isIP(ip ?? '');
    const bits = prefix === undefined ? null : Number(prefix);
    const max = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== null && !(Number.isInteger(bits) && bits >= 0 && bits <= max)) ||
      prefix === ''
    ) {
      throw new Error(`not an IP address or CIDR: ${entry}`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === null) blocks.addAddress(ip!, type);
    else blocks.addSubnet(ip!, bits, type);
  }
  return {
    empty: entries.length === 0,
    has: (address) => {
      const a = normalizeIp(address);
      const family = isIP(a);
      return family !== 0 && blocks.check(a, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

export function clientAddress(peer: string, forwardedFor: string | null | undefined, trusted: TrustedProxies): string {
  const direct = normalizeIp(peer);
  if (trusted.empty || !forwardedFor || !trusted.has(direct)) return direct;
  const hops = forwardedFor.split(',');
  let last = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeIp(hops[i]!);
    if (isIP(hop) === 0) return last; // garbage: stop at the last hop we could read
    if (!trusted.has(hop)) return hop;
    last = hop;
  }
  return last;
}
