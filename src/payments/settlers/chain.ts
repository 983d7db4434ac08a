import {
  BaseError,
  ContractFunctionRevertedError,
  createWalletClient,
  formatUnits,
  http,
  parseSignature,
  size,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { USDC_DECIMALS } from '../../../packages/isocast-client/src/chain.ts';
import { chainFor, createProofReader, EIP3009_ABI, RPC_TIMEOUT_MS, shortError } from './chain-proof.ts';
import { settledBefore, termsOf, type SettleOutcome, type SettleRequest, type Settler } from './settler.ts';

export { EIP3009_ABI } from './chain-proof.ts';

const RECEIPT_TIMEOUT_MS = 60_000;

/** Self-settlement (SETTLER_PRIVATE_KEY pays gas): a used nonce pays only if its transaction paid PAY_TO the price. */
export function createChainSettler(opts: { rpcUrl: string; privateKey: Hex; usdc: Address }): Settler {
  const chain = chainFor(opts.rpcUrl);
  const { pub, status, judge } = createProofReader(opts);
  const account = privateKeyToAccount(opts.privateKey);
  const wallet = createWalletClient({
    chain,
    transport: http(opts.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }),
    account,
  });
  /** After our attempt went wrong: a competitor's use pays the same wallet; spent is not charged; else in doubt. */
  async function after(req: SettleRequest, reason: string, txHash?: Hex): Promise<SettleOutcome> {
    const st = await status(req.payer, req.authorization.nonce, termsOf(req));
    if (st.state === 'used') return { ok: true, txHash: st.txHash };
    if (st.state === 'spent') return { ok: false, inDoubt: false, reason: st.reason };
    return { ok: false, inDoubt: true, reason, ...(txHash ? { txHash } : {}) };
  }

  /** Why the transfer cannot succeed, or null; an RPC failure decides nothing and the send goes ahead. */
  async function preflight(req: SettleRequest, call: TransferCall, block?: bigint): Promise<string | null> {
    const at = block === undefined ? {} : { blockNumber: block };
    try {
      const balance = await pub.readContract({
        address: opts.usdc,
        abi: EIP3009_ABI,
        functionName: 'balanceOf',
        args: [req.payer],
        ...at,
      });
      if (balance < req.authorization.value)
        return `payer balance ${formatUnits(balance, USDC_DECIMALS)} USDC is below the ${formatUnits(req.authorization.value, USDC_DECIMALS)} USDC authorized`;
    } catch {
      return null;
    }
    try {
      // The ABI's two overloads defeat viem's argument inference; transferCall builds either form.
      await pub.simulateContract({
        address: opts.usdc,
        abi: EIP3009_ABI,
        account: account.address,
        ...call,
        ...at,
      } as never);
      return null;
    } catch (err) {
      const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
      if (!(reverted instanceof ContractFunctionRevertedError)) return null;
      return `transferWithAuthorization would revert: ${reverted.reason ?? reverted.shortMessage}`;
    }
  }

  return {
    kind: 'chain',
    // The receipt wait plus one RPC timeout each side; slower leaves the payment in doubt, never lost.
    maxSettleMs: RECEIPT_TIMEOUT_MS + 2 * RPC_TIMEOUT_MS,
    async settle(req) {
      const a = req.authorization;
      const earlier = await status(req.payer, a.nonce, termsOf(req));
      const final = settledBefore(earlier);
      if (final) return final;
      // Without a definite answer nothing is sent: a competitor may already have used the nonce.
      if (earlier.state === 'unknown') return { ok: false, inDoubt: true, sent: false, reason: earlier.reason };
      const call = transferCall(req);
      // Balance and a simulated call at the block that said "unused": a refusal here sent nothing, not charged.
      const refused = await preflight(req, call, earlier.block);
      if (refused) return { ok: false, inDoubt: false, reason: refused };
      let hash: Hex;
      try {
        hash = await wallet.writeContract({ address: opts.usdc, abi: EIP3009_ABI, ...call } as never);
      } catch (err) {
        // An errored send may have reached the mempool, or a competitor used the nonce: only the chain can say.
        return after(req, `transferWithAuthorization send failed: ${shortError(err)}`);
      }
      try {
        const receipt = await pub.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS });
        // Our own receipt, judged by the same rule as anyone's: the logs must prove PAY_TO got the price.
        const proof =
          receipt.status === 'success'
            ? judge({ hash, logs: receipt.logs }, { payer: req.payer, nonce: a.nonce, terms: termsOf(req) })
            : null;
        if (proof?.state === 'used') return { ok: true, txHash: hash };
        // Reverted by a competitor's use (which paid us), or else the public calldata may land until validBefore.
        return after(req, `transaction ${hash} reverted`, hash);
      } catch (err) {
        return after(req, `transaction ${hash} not confirmed: ${shortError(err)}`, hash);
      }
    },
    status,
  };
}

type TransferCall = ReturnType<typeof transferCall>;

/** (v, r, s) for a 65-byte signature, else bytes. */
function transferCall(req: SettleRequest) {
  const a = req.authorization;
  const base = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
  if (size(req.signature) === 65) {
    const { r, s, v, yParity } = parseSignature(req.signature);
    return {
      functionName: 'transferWithAuthorization' as const,
      args: [...base, Number(v ?? BigInt(yParity + 27)), r, s] as const,
    };
  }
  return { functionName: 'transferWithAuthorization' as const, args: [...base, req.signature] as const };
}
