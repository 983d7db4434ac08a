import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  parseAbi,
  parseSignature,
  size,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CHAIN_ID } from '../eip3009.ts';
import type { AuthorizationStatus, SettleOutcome, SettleRequest, Settler } from './settler.ts';

/**
 * Self-settlement: we submit USDC's `transferWithAuthorization` from SETTLER_PRIVATE_KEY (which
 * pays gas only; funds move from the payer to PAY_TO) and wait for the receipt. The token
 * contract burns each (from, nonce) once, so a nonce already used on chain is resolved to the
 * transaction that used it instead of being submitted again.
 */
export const EIP3009_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function balanceOf(address account) view returns (uint256)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

export type ChainSettlerOptions = {
  rpcUrl: string;
  privateKey: Hex;
  usdc: Address;
  /** How long to wait for the receipt before the outcome is reported in doubt. */
  receiptTimeoutMs?: number;
  /** How far back to look for the AuthorizationUsed event of an already-used nonce. */
  lookbackBlocks?: bigint;
  pollingIntervalMs?: number;
};

/** Each JSON-RPC call gives up after this; viem retries once. */
export const RPC_TIMEOUT_MS = 15_000;
export const RECEIPT_TIMEOUT_MS = 60_000;

export function chainFor(rpcUrl: string) {
  return defineChain({
    id: CHAIN_ID,
    name: 'Base',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/**
 * authorizationState(payer, nonce) read at the latest block, with that block's time: the one
 * definitive source for a settlement whose outcome is in doubt. A used nonce is traced to the
 * transaction that used it (its AuthorizationUsed log) when that is within the lookback.
 */
export function createAuthorizationLookup(opts: {
  rpcUrl: string;
  usdc: Address;
  lookbackBlocks?: bigint;
  pollingIntervalMs?: number;
}): {
  pub: PublicClient;
  status(payer: Address, nonce: Hex, validBefore: number): Promise<AuthorizationStatus>;
} {
  const transport = http(opts.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const pub = createPublicClient({
    chain: chainFor(opts.rpcUrl),
    transport,
    pollingInterval: opts.pollingIntervalMs ?? 1_000,
  }) as PublicClient;
  const lookback = opts.lookbackBlocks ?? 50_000n;

  async function status(payer: Address, nonce: Hex, validBefore: number): Promise<AuthorizationStatus> {
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
      if (!used) return { state: 'unused', expired: Number(block.timestamp) >= validBefore };
      const logs = await pub.getContractEvents({
        address: opts.usdc,
        abi: EIP3009_ABI,
        eventName: 'AuthorizationUsed',
        args: { authorizer: payer, nonce },
        fromBlock: block.number > lookback ? block.number - lookback : 0n,
        toBlock: block.number,
      });
      return { state: 'used', txHash: (logs[0]?.transactionHash ?? null) as Hex | null };
    } catch (err) {
      return { state: 'unknown', reason: `rpc: ${shortError(err)}` };
    }
  }
  return { pub, status };
}

export function createChainSettler(opts: ChainSettlerOptions): Settler {
  const chain = chainFor(opts.rpcUrl);
  const { pub, status } = createAuthorizationLookup(opts);
  const wallet = createWalletClient({
    chain,
    transport: http(opts.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }),
    account: privateKeyToAccount(opts.privateKey),
  });
  const receiptTimeoutMs = opts.receiptTimeoutMs ?? RECEIPT_TIMEOUT_MS;
  /**
   * The chain's word after our attempt went wrong: used is paid (by our transaction or a
   * competitor's use of the same authorization, which pays the same wallet), anything else in doubt.
   */
  async function after(req: SettleRequest, reason: string, txHash?: Hex): Promise<SettleOutcome> {
    const st = await status(req.payer, req.authorization.nonce, Number(req.authorization.validBefore));
    if (st.state === 'used') return { ok: true, txHash: st.txHash };
    return { ok: false, inDoubt: true, reason, ...(txHash ? { txHash } : {}) };
  }

  return {
    kind: 'chain',
    // The receipt wait plus one RPC timeout on each side of it (the check and send before, the
    // chain's word after); a slower RPC than that leaves the payment in doubt, never lost.
    maxSettleMs: receiptTimeoutMs + 2 * RPC_TIMEOUT_MS,
    async settle(req) {
      const a = req.authorization;
      const earlier = await status(req.payer, a.nonce, Number(a.validBefore));
      if (earlier.state === 'used') return { ok: true, txHash: earlier.txHash, alreadySettled: true };
      // Without a definite answer nothing is sent: a competitor may already have used the nonce.
      if (earlier.state === 'unknown') return { ok: false, inDoubt: true, reason: earlier.reason };
      if (earlier.expired)
        return { ok: false, inDoubt: false, reason: 'authorization expired before it could be settled' };
      const base = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
      let hash: Hex;
      try {
        if (size(req.signature) === 65) {
          const { r, s, v, yParity } = parseSignature(req.signature);
          hash = await wallet.writeContract({
            address: opts.usdc,
            abi: EIP3009_ABI,
            functionName: 'transferWithAuthorization',
            args: [...base, Number(v ?? BigInt(yParity + 27)), r, s],
          });
        } else {
          hash = await wallet.writeContract({
            address: opts.usdc,
            abi: EIP3009_ABI,
            functionName: 'transferWithAuthorization',
            args: [...base, req.signature],
          });
        }
      } catch (err) {
        // A send that errored may still have reached the mempool, and a competitor may have used
        // the nonce between our check and our send: only the chain can say.
        return after(req, `transferWithAuthorization send failed: ${shortError(err)}`);
      }
      try {
        const receipt = await pub.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs });
        if (receipt.status === 'success') return { ok: true, txHash: hash };
        // Reverted: by a competitor's earlier use of the nonce (then we were paid by theirs), or
        // for another reason, in which case the now-public calldata can still land until validBefore.
        return after(req, `transaction ${hash} reverted`, hash);
      } catch (err) {
        return after(req, `transaction ${hash} not confirmed: ${shortError(err)}`, hash);
      }
    },
    status,
  };
}

function shortError(err: unknown): string {
  const e = err as { shortMessage?: string; message?: string };
  return (e.shortMessage ?? e.message ?? String(err)).split('\n')[0]!;
}
