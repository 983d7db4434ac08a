import { BlockList, isIP } from 'node:net';
import { splitList } from '../lib/url-credentials.ts';

/**
 * The address a request comes from. The socket's peer, unless that peer is one of the operator's
 * reverse proxies (TRUSTED_PROXIES: IPs and CIDRs); then the right-most `X-Forwarded-For` hop that
 * is not itself a trusted proxy. Hops left of it were written by the client and prove nothing,
 * so taking the left-most would let anyone pick their own rate-limit key.
 */
export type TrustedProxies = { has(address: string): boolean; readonly empty: boolean };

/** An IPv4-mapped address (`::ffff:10.0.0.1`, or in hex `::ffff:a00:1`) as the IPv4 address; anything else trimmed. */
export function normalizeIp(address: string): string {
  const a = address.trim();
  const words = ipv6Words(a);
  if (words === null || !words.slice(0, 5).every((w) => w === 0) || words[5] !== 0xffff) return a;
  return [words[6]! >> 8, words[6]! & 255, words[7]! >> 8, words[7]! & 255].join('.');
}

/**
 * The key a client is budgeted under: an IPv4 address itself; an IPv6 one its /64, written
 * canonically, because a /64 is what one subscriber is given (RFC 6177; SLAAC and privacy addresses
 * pick any of its 2^64 hosts). Anything that is not an IP (cannot come from a socket) is its own key.
 */
export function addressKey(address: string): string {
  const a = normalizeIp(address);
  const words = ipv6Words(a);
  if (words === null) return a;
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit words of an IPv6 address (zone id dropped), or null for anything else. */
function ipv6Words(address: string): number[] | null {
  const zone = address.indexOf('%');
  let a = zone < 0 ? address : address.slice(0, zone);
  if (isIP(a) !== 6) return null;
  const lastColon = a.lastIndexOf(':');
  const tail = a.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [b0, b1, b2, b3] = tail.split('.').map(Number) as [number, number, number, number];
    a = `${a.slice(0, lastColon + 1)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head = '', rest] = a.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => Number.parseInt(h, 16)));
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** Parses a comma list of IPs and CIDRs; throws with the first entry that is neither. */
export function parseTrustedProxies(list: string | undefined): TrustedProxies {
  const entries = splitList(list ?? '');
  // None by default: node:net's BlockList loads its module at first construction, at every start.
  if (entries.length === 0) return { empty: true, has: () => false };
  const blocks = new BlockList();
  for (const entry of entries) {
    const [ip, prefix, extra] = entry.split('/');
    const family = isIP(ip ?? '');
    const bits = prefix === undefined ? null : Number(prefix);
    const bitsOk =
      bits === null || (prefix !== '' && Number.isInteger(bits) && bits >= 0 && bits <= (family === 4 ? 32 : 128));
    if (family === 0 || extra !== undefined || !bitsOk) throw new Error(`not an IP address or CIDR: ${entry}`);
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

/** The budget key (addressKey) of the client a request comes from. */
export function clientKey(peer: string, forwardedFor: string | null | undefined, trusted: TrustedProxies): string {
  const direct = normalizeIp(peer);
  if (trusted.empty || !forwardedFor || !trusted.has(direct)) return addressKey(direct);
  const hops = forwardedFor.split(',');
  let last = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeIp(hops[i]!);
    if (isIP(hop) === 0) break; // garbage: stop at the last hop we could read
    if (!trusted.has(hop)) return addressKey(hop);
    last = hop;
  }
  return addressKey(last);
}
