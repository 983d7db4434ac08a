import { createPublicClient, defineChain, http, parseAbi, type Address, type Hex, type PublicClient } from 'viem';
import { BASE_CHAIN_ID } from '../../x402/networks.ts';
import { createJsonPost } from '../../lib/http-client.ts';
import type { AuthorizationStatus, PaymentTerms } from './settler.ts';

/** The token's word over our RPC_URL: a facilitator's success costs one receipt, a used nonce one eth_getLogs. */
export const EIP3009_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function balanceOf(address account) view returns (uint256)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

export const RPC_TIMEOUT_MS = 15_000;
/** A facilitator's named transaction may take this long to appear on our own RPC. */
const CONFIRM_WAIT_MS = 10_000;
const POLL_MS = 1_000;
const LOOKBACK_BLOCKS = 50_000n;

export function chainFor(rpcUrl: string) {
  return defineChain({
    id: BASE_CHAIN_ID,
    name: 'Base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/** A transaction's verdict: `absent` when it reverted or says nothing about (payer, nonce). */
type TransactionProof = Exclude<AuthorizationStatus, { state: 'unused' }> | { state: 'absent' };

type Expect = { payer: Address; nonce: Hex; terms: PaymentTerms };

export function createProofReader(opts: { rpcUrl: string; usdc: Address }) {
  const pub = createPublicClient({
    chain: chainFor(opts.rpcUrl),
    transport: http(opts.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }),
    pollingInterval: POLL_MS,
  }) as PublicClient;
  // A plain JSON-RPC post per facilitator success: viem's transport and formatters cost twice the /settle call.
  const rpc = createJsonPost('rpc', { baseUrl: opts.rpcUrl });
  let rpcId = 0;
  const receiptCall = (txHash: Hex) => ({
    jsonrpc: '2.0',
    id: ++rpcId,
    method: 'eth_getTransactionReceipt',
    params: [txHash],
  });
  /** viem's transport retried once; so does every read here, on a failed call or a server error. */
  const postTwice = async (body: unknown) => {
    const answer = await rpc.post('', body, RPC_TIMEOUT_MS).catch(() => null);
    return answer === null || answer.status >= 500 ? rpc.post('', body, RPC_TIMEOUT_MS) : answer;
  };
  const readOne = async (txHash: Hex) => receiptOf(await postTwice(receiptCall(txHash)));
  // One JSON-RPC batch per event-loop turn; a node that answers a batch badly is asked one call at a time.
  let queued: { txHash: Hex; done: (r: Promise<RawReceipt | null>) => void }[] = [];
  const flush = async () => {
    const batch = queued;
    queued = [];
    if (batch.length === 1) return batch[0]!.done(readOne(batch[0]!.txHash));
    const calls = batch.map((q) => receiptCall(q.txHash));
    let answers: unknown[] | null = null;
    try {
      const answer = await postTwice(calls);
      if (answer.status >= 200 && answer.status <= 299 && Array.isArray(answer.json)) answers = answer.json;
    } catch (err) {
      for (const q of batch) q.done(Promise.reject(err));
      return;
    }
    batch.forEach((q, i) => {
      const one = answers?.find((a) => (a as { id?: unknown } | null)?.id === calls[i]!.id);
      q.done(
        one === undefined ? readOne(q.txHash) : Promise.resolve().then(() => receiptOf({ status: 200, json: one })),
      );
    });
  };
  const readReceipt = (txHash: Hex): Promise<RawReceipt | null> =>
    new Promise((resolve) => {
      queued.push({ txHash, done: resolve });
      if (queued.length === 1) setImmediate(flush);
    });

  const judge = (tx: { hash: Hex; logs: readonly ProofLog[] }, { payer, nonce, terms }: Expect): TransactionProof => {
    const v = settlementVerdict(tx.logs, { usdc: opts.usdc, payer, nonce, payTo: terms.payTo, value: terms.value });
    if (v.kind === 'paid') return { state: 'used', txHash: tx.hash };
    if (v.kind === 'not-paid') return { state: 'spent', txHash: tx.hash, reason: v.reason };
    return { state: 'absent' };
  };

  async function confirm(txHash: Hex, expect: Expect): Promise<TransactionProof> {
    try {
      let receipt = await readReceipt(txHash);
      // A facilitator's own node may be a block ahead of ours: wait a little, then in doubt.
      const deadline = Date.now() + CONFIRM_WAIT_MS;
      while (receipt === null) {
        if (Date.now() + POLL_MS > deadline)
          throw new Error(`Timed out while waiting for transaction with hash "${txHash}" to be confirmed.`);
        await new Promise((r) => setTimeout(r, POLL_MS));
        receipt = await readReceipt(txHash);
      }
      if (receipt.status !== '0x1') return { state: 'absent' };
      return judge({ hash: txHash, logs: receipt.logs }, expect);
    } catch (err) {
      return { state: 'unknown', reason: `rpc: ${shortError(err)}` };
    }
  }

  /** The token's word on (payer, nonce), with the block it was read at for checks that must see the same state. */
  async function status(
    payer: Address,
    nonce: Hex,
    terms: PaymentTerms,
  ): Promise<AuthorizationStatus & { block?: bigint }> {
    try {
      // One block for both answers: "unused at a block whose time is past validBefore" is final.
      const block = await pub.getBlock({ blockTag: 'latest' });
      const used = await pub.readContract({
        address: opts.usdc,
        abi: EIP3009_ABI,
        functionName: 'authorizationState',
        args: [payer, nonce],
        blockNumber: block.number,
      });
      if (!used) return { state: 'unused', expired: Number(block.timestamp) >= terms.validBefore, block: block.number };
      // Used or cancelled: one eth_getLogs for either event, then the using transaction's receipt.
      const logs = await pub.request({
        method: 'eth_getLogs',
        params: [
          {
            address: opts.usdc,
            topics: [
              [AUTHORIZATION_USED_TOPIC, AUTHORIZATION_CANCELED_TOPIC],
              `0x${payer.slice(2).toLowerCase().padStart(64, '0')}`,
              nonce,
            ],
            fromBlock: `0x${(block.number > LOOKBACK_BLOCKS ? block.number - LOOKBACK_BLOCKS : 0n).toString(16)}`,
            toBlock: `0x${block.number.toString(16)}`,
          },
        ],
      });
      const found = logs[0];
      if (!found?.transactionHash)
        return { state: 'unknown', reason: 'nonce used on chain, but the transaction that used it is not in view' };
      const tx = found.transactionHash as Hex;
      if (found.topics[0]?.toLowerCase() === AUTHORIZATION_CANCELED_TOPIC)
        return { state: 'spent', txHash: tx, reason: 'the authorization was cancelled on chain (cancelAuthorization)' };
      const proof = await confirm(tx, { payer, nonce, terms });
      if (proof.state === 'absent')
        return { state: 'unknown', reason: `transaction ${tx} used the nonce but its receipt does not show it` };
      return proof;
    } catch (err) {
      return { state: 'unknown', reason: `rpc: ${shortError(err)}` };
    }
  }
  return { pub, status, confirm, judge };
}

type RawReceipt = { status: string; logs: ProofLog[] };

function receiptOf(answer: { status: number; json: unknown }): RawReceipt | null {
  const m = answer.json as { result?: unknown; error?: { message?: unknown } } | undefined;
  if (answer.status < 200 || answer.status > 299) throw new Error(`HTTP request failed. Status: ${answer.status}`);
  if (!m || typeof m !== 'object') throw new Error('RPC answer is not JSON-RPC');
  if (m.error) throw new Error(String(m.error.message ?? 'RPC error'));
  if (m.result === null) return null;
  const r = m.result as { status?: unknown; logs?: unknown };
  if (typeof r !== 'object' || !Array.isArray(r.logs) || typeof r.status !== 'string')
    throw new Error('RPC receipt without status or logs');
  const logs: ProofLog[] = [];
  for (const l of r.logs as { address?: unknown; topics?: unknown; data?: unknown }[]) {
    if (typeof l?.address !== 'string' || !Array.isArray(l.topics) || typeof l.data !== 'string')
      throw new Error('RPC receipt log without address, topics or data');
    logs.push({ address: l.address, topics: l.topics.map(String), data: l.data });
  }
  return { status: r.status.toLowerCase(), logs };
}

export function shortError(err: unknown): string {
  const e = err as { shortMessage?: string; message?: string };
  return (e.shortMessage ?? e.message ?? String(err)).split('\n')[0]!;
}

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
