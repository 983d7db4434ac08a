import {
  createPublicClient,
  createWalletClient,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { payFor402, signReceiptBody } from '../../packages/isocast-client/src/index.ts';
import { RECEIPT_REQUEST_PRIMARY_TYPE } from '../../packages/isocast-client/src/receipt-typed-data.ts';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { chainFor } from '../../src/payments/settlers/chain-proof.ts';
import { compileTestUsdc, DEPLOYER_KEY, SETTLER_KEY, startLocalChain, type LocalChain } from '../../test/chain/evm.ts';
import { startReferenceFront, type ReferenceFront } from '../../test/chain/reference-facilitators.ts';
import { spendNonce, type SpendVariant } from '../../test/chain/spend-nonce.ts';
import type { AttackCase, AttackContext, AttackServer, HttpAnswer } from './types.ts';

/**
 * Issue 35 item 1 on a real local chain (chain id 8453, the EIP-3009 test token): the attacker
 * burns the binding nonce without paying (cancelAuthorization, or a value-0 transfer to itself),
 * then sends a correctly signed X-Payment with it. Live mode, a real `serve` per case, through our
 * chain settler and through the reference `@x402/core` facilitator. A safe server answers 402 and
 * PAY_TO receives nothing; an honest buyer after it still pays and reads.
 */
const PAY_TO = '0x00000000000000000000000000000000000000c7' as Address;
const DEAD = 'http://127.0.0.1:9';

let compiled: { abi: Abi; bytecode: Hex } | null = null;

type Rig = {
  chain: LocalChain;
  pub: PublicClient;
  usdc: Address;
  mint(to: Address, micro: bigint): Promise<void>;
  balance(who: Address): Promise<bigint>;
};

async function rig(): Promise<Rig> {
  const chain = await startLocalChain();
  const viemChain = chainFor(chain.rpcUrl);
  const pub = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) }) as PublicClient;
  const deployer = createWalletClient({
    chain: viemChain,
    transport: http(chain.rpcUrl),
    account: privateKeyToAccount(DEPLOYER_KEY),
  });
  compiled ??= compileTestUsdc();
  const { abi, bytecode } = compiled;
  const usdc = (await pub.waitForTransactionReceipt({ hash: await deployer.deployContract({ abi, bytecode }) }))
    .contractAddress!;
  return {
    chain,
    pub,
    usdc,
    mint: async (to, micro) => {
      await pub.waitForTransactionReceipt({
        hash: await deployer.writeContract({ address: usdc, abi, functionName: 'mint', args: [to, micro] }),
      });
    },
    balance: (who) => pub.readContract({ address: usdc, abi: EIP3009_ABI, functionName: 'balanceOf', args: [who] }),
  };
}

/** A live `serve` on the rig's chain: the feed points nowhere (the seeded signals are what is sold). */
function liveServer(ctx: AttackContext, r: Rig, settlement: Record<string, string>): Promise<AttackServer> {
  return ctx.startServer({
    PAYMENT_MODE: 'live',
    FEED: 'live',
    WEATHER_SOURCE: 'metar',
    METAR_URL: DEAD,
    GAMMA_URL: DEAD,
    CLOB_URL: DEAD,
    RPC_URL: r.chain.rpcUrl,
    USDC_ADDRESS: r.usdc,
    PAY_TO,
    OFAC_REQUIRED: 'false',
    ...settlement,
  });
}

const rows = (a: HttpAnswer) => (Array.isArray(a.json?.signals) ? a.json.signals.length : 0);

/**
 * One purchase of 20 signals (POST /v1/subscribe, as in the issue's run); with `spend`, the nonce
 * is burnt on chain first. Then the buyer recovers a receipt token with a signed ReceiptRequest
 * and reads with it: the rows a credit, if any, gives.
 */
async function attempt(
  ctx: AttackContext,
  r: Rig,
  opts: { base: string; buyer: PrivateKeyAccount; spend?: SpendVariant },
): Promise<{ status: number; moved: bigint; rows: number; reason: string }> {
  const path = `/v1/subscribe?city=${ctx.city}&count=20`;
  const challenge = await ctx.http(path, { base: opts.base, method: 'POST' });
  if (challenge.status !== 402) throw new Error(`challenge answered ${challenge.status}`);
  const p = await payFor402(challenge.json, opts.buyer, { nowMs: Date.now(), expect: { usdc: r.usdc } });
  if (opts.spend)
    await spendNonce({
      rpcUrl: r.chain.rpcUrl,
      pub: r.pub,
      usdc: r.usdc,
      payer: opts.buyer,
      nonce: p.authorization.nonce,
      variant: opts.spend,
    });
  const before = await r.balance(PAY_TO);
  const a = await ctx.http(path, { base: opts.base, method: 'POST', headers: { 'x-payment': p.xPayment } });
  const moved = (await r.balance(PAY_TO)) - before;
  const body = await signReceiptBody(opts.buyer, {
    server: opts.base,
    kind: RECEIPT_REQUEST_PRIMARY_TYPE,
    timestampS: Math.floor(Date.now() / 1000),
  });
  const rec = await ctx.http('/v1/receipts', {
    base: opts.base,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  let read = 0;
  if (typeof rec.json?.receiptToken === 'string') {
    const page = await ctx.http(`/v1/signals?city=${ctx.city}&since=0`, {
      base: opts.base,
      headers: { authorization: `Bearer ${rec.json.receiptToken}` },
    });
    read = rows(page);
  }
  const reason =
    a.status === 200 ? `paidThroughSeq ${a.json?.paidThroughSeq}` : String(a.json?.reason ?? a.json?.error ?? '');
  return { status: a.status, moved, rows: read, reason };
}

function spentNonceCase(settler: 'chain' | 'v2'): AttackCase {
  return {
    name: `a nonce burnt on chain (cancel, value-0 self transfer) buys nothing through the ${settler === 'chain' ? 'chain settler' : 'reference facilitator'}`,
    expected:
      'both variants: 402, no credit (a recovered receipt reads 0 rows), PAY_TO +0; an honest buyer after them: 200, rows, PAY_TO +price',
    fast: false,
    async run(ctx) {
      const r = await rig();
      let front: ReferenceFront | null = null;
      try {
        if (settler === 'v2') front = await startReferenceFront('v2', r.chain.rpcUrl);
        const s = await liveServer(
          ctx,
          r,
          front
            ? { SETTLEMENT: 'facilitator', FACILITATOR_URL: front.url }
            : { SETTLEMENT: 'chain', SETTLER_PRIVATE_KEY: SETTLER_KEY },
        );
        const out: string[] = [];
        let ok = true;
        for (const spend of ['cancel', 'self'] as const) {
          const a = await attempt(ctx, r, { base: s.baseUrl, buyer: privateKeyToAccount(generatePrivateKey()), spend });
          out.push(
            `${spend}: ${a.status}, ${a.rows} rows, PAY_TO +${a.moved}${a.reason ? ` (${a.reason.slice(0, 60)})` : ''}`,
          );
          ok &&= a.status === 402 && a.rows === 0 && a.moved === 0n;
        }
        const honest = privateKeyToAccount(generatePrivateKey());
        await r.mint(honest.address, 1_000_000n);
        const h = await attempt(ctx, r, { base: s.baseUrl, buyer: honest });
        out.push(`honest: ${h.status}, ${h.rows} rows, PAY_TO +${h.moved}`);
        ok &&= h.status === 200 && h.rows > 0 && h.moved > 0n;
        return { observed: out.join('; '), ok };
      } finally {
        await front?.close();
        await r.chain.close();
      }
    },
  };
}

export const cases: AttackCase[] = [spentNonceCase('chain'), spentNonceCase('v2')];
