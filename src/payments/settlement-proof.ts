/**
 * "Paid" means USDC reached payTo, not a spent nonce (`cancelAuthorization` or a value-0 transfer spend it): every
 * place that decides it asks for `AuthorizationUsed(payer, nonce)` then at once `Transfer(payer, payTo, value)`, as
 * FiatToken emits them, so one transfer cannot vouch for several nonces.
 */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const AUTHORIZATION_USED_TOPIC = '0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5';
export const AUTHORIZATION_CANCELED_TOPIC = '0x1cdd46ff242716cdaa72d159d339a485b3438398348d68f09d7c8c0a59353d81';

/** A receipt log as eth_getTransactionReceipt / eth_getLogs return it (viem's shape fits). */
export type ProofLog = { address: string; topics: readonly string[]; data: string };

type ExpectedPayment = {
  /** The token contract: logs from any other address are ignored. */
  usdc: string;
  payer: string;
  payTo: string;
  /** The exact amount in micro-USDC. */
  value: bigint;
  nonce: string;
};

type SettlementVerdict =
  | { kind: 'paid' }
  /** The nonce is spent without paying payTo the price: definitely not charged by this payment. */
  | { kind: 'not-paid'; reason: string }
  /** These logs say nothing about (payer, nonce). */
  | { kind: 'absent' };

const isTopicAddress = (topic: string | undefined, address: string) =>
  topic !== undefined && topic.length === 66 && topic.slice(26).toLowerCase() === address.slice(2).toLowerCase();
const sameHex = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

export function settlementVerdict(logs: readonly ProofLog[], expect: ExpectedPayment): SettlementVerdict {
  for (let i = 0; i < logs.length; i++) {
    const log = logs[i]!;
    if (!sameHex(log.address, expect.usdc)) continue;
    const [topic0, authorizer, nonce] = log.topics;
    if (!isTopicAddress(authorizer, expect.payer) || !sameHex(nonce, expect.nonce)) continue;
    if (sameHex(topic0, AUTHORIZATION_CANCELED_TOPIC))
      return { kind: 'not-paid', reason: 'the authorization was cancelled on chain (cancelAuthorization)' };
    if (!sameHex(topic0, AUTHORIZATION_USED_TOPIC)) continue;
    const next = logs[i + 1];
    if (
      next &&
      sameHex(next.address, expect.usdc) &&
      sameHex(next.topics[0], TRANSFER_TOPIC) &&
      isTopicAddress(next.topics[1], expect.payer) &&
      isTopicAddress(next.topics[2], expect.payTo) &&
      uint256(next.data) === expect.value
    )
      return { kind: 'paid' };
    return { kind: 'not-paid', reason: `the nonce was used by a transfer that did not pay ${describe(next, expect)}` };
  }
  return { kind: 'absent' };
}

function uint256(data: string): bigint | null {
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(data)) return null;
  return BigInt(data);
}

function describe(next: ProofLog | undefined, expect: ExpectedPayment): string {
  const want = `${expect.value} micro-USDC to ${expect.payTo}`;
  if (!next || !sameHex(next.topics[0], TRANSFER_TOPIC)) return `${want} (no transfer followed)`;
  const to = next.topics[2] ? `0x${next.topics[2].slice(26)}` : 'unknown';
  return `${want} (it moved ${uint256(next.data) ?? 'an unreadable amount of'} micro-USDC to ${to})`;
}
