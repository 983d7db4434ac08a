import {
  createPublicClient, createWalletClient, defineChain, http, parseAbi, parseSignature, size,
  type Address, type Hex, type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CHAIN_ID } from '../eip3009.ts';
import type { SettlementLookup, Settler } from './settler.ts';

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

export function chainFor(rpcUrl: string) {
  return defineChain({
    id: CHAIN_ID, name: 'Base', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/**
 * Whether USDC has burnt (payer, nonce), and by which transaction. The chain settler uses it, and
 * so does the facilitator settler when RPC_URL is set, to resolve a settle call that timed out.
 */
export function createAuthorizationLookup(opts: { rpcUrl: string; usdc: Address; lookbackBlocks?: bigint; pollingIntervalMs?: number }): {
  pub: PublicClient;
  usedBy(payer: Address, nonce: Hex): Promise<SettlementLookup>;
} {
  const transport = http(opts.rpcUrl, { timeout: 15_000, retryCount: 1 });
  const pub = createPublicClient({ chain: chainFor(opts.rpcUrl), transport, pollingInterval: opts.pollingIntervalMs ?? 1_000 }) as PublicClient;
  const lookback = opts.lookbackBlocks ?? 10_000n;

  async function usedBy(payer: Address, nonce: Hex): Promise<SettlementLookup> {
    const used = await pub.readContract({ address: opts.usdc, abi: EIP3009_ABI, functionName: 'authorizationState', args: [payer, nonce] });
    if (!used) return { found: null };
    // cacheTime 0: a cached block number can predate the transaction we are looking for.
    const latest = await pub.getBlockNumber({ cacheTime: 0 });
    const logs = await pub.getContractEvents({
      address: opts.usdc, abi: EIP3009_ABI, eventName: 'AuthorizationUsed', args: { authorizer: payer, nonce },
      fromBlock: latest > lookback ? latest - lookback : 0n, toBlock: 'latest',
    });
    const tx = logs[0]?.transactionHash;
    return tx ? { found: tx } : { unknown: true };
  }
  return { pub, usedBy };
}

export function createChainSettler(opts: ChainSettlerOptions): Settler {
  const chain = chainFor(opts.rpcUrl);
  const { pub, usedBy } = createAuthorizationLookup(opts);
  const wallet = createWalletClient({ chain, transport: http(opts.rpcUrl, { timeout: 15_000, retryCount: 1 }), account: privateKeyToAccount(opts.privateKey) });

  return {
    kind: 'chain',
    async settle(req) {
      const a = req.authorization;
      try {
        const earlier = await usedBy(req.payer, a.nonce);
        if ('found' in earlier && earlier.found) return { ok: true, txHash: earlier.found, alreadySettled: true };
        if ('unknown' in earlier) return { ok: false, reason: 'authorization already used on chain by a transaction outside the lookback' };
      } catch (err) {
        return { ok: false, reason: `rpc: ${shortError(err)}` };
      }
      const base = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
      let hash: Hex;
      try {
        if (size(req.signature) === 65) {
          const { r, s, v, yParity } = parseSignature(req.signature);
          hash = await wallet.writeContract({ address: opts.usdc, abi: EIP3009_ABI, functionName: 'transferWithAuthorization', args: [...base, Number(v ?? BigInt(yParity + 27)), r, s] });
        } else {
          hash = await wallet.writeContract({ address: opts.usdc, abi: EIP3009_ABI, functionName: 'transferWithAuthorization', args: [...base, req.signature] });
        }
      } catch (err) {
        // A competing submission may have used the nonce between our check and our send.
        const raced = await usedBy(req.payer, a.nonce).catch(() => null);
        if (raced && 'found' in raced && raced.found) return { ok: true, txHash: raced.found, alreadySettled: true };
        return { ok: false, reason: `transferWithAuthorization refused: ${shortError(err)}` };
      }
      try {
        const receipt = await pub.waitForTransactionReceipt({ hash, timeout: opts.receiptTimeoutMs ?? 60_000 });
        if (receipt.status === 'success') return { ok: true, txHash: hash };
        return { ok: false, reason: `transaction ${hash} reverted` };
      } catch (err) {
        return { ok: false, inDoubt: true, reason: `transaction ${hash} not confirmed: ${shortError(err)}; retry the same payment to resolve it` };
      }
    },
    lookup: (payer, nonce) => usedBy(payer, nonce),
  };
}

function shortError(err: unknown): string {
  const e = err as { shortMessage?: string; message?: string };
  return (e.shortMessage ?? e.message ?? String(err)).split('\n')[0]!;
}
