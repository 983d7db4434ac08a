import { createPublicClient, http, type Address, type Hex } from 'viem';
import type { TypedDataVerifier } from '../verify.ts';
import { EIP3009_ABI, createChainSettler } from './chain.ts';
import { chainFor, createProofReader } from './chain-proof.ts';
import { cdpJwtHeaders } from './cdp-auth.ts';
import { createFacilitatorSettler } from './facilitator.ts';
import { createMockSettler } from './mock.ts';
import type { Settler } from './settler.ts';

/** The settings a settler reads; the server's Config carries them (config.ts). */
export interface SettlerSettings {
  PAYMENT_MODE: 'mock' | 'live';
  SETTLEMENT: 'facilitator' | 'chain';
  RPC_URL?: string | undefined;
  SETTLER_PRIVATE_KEY?: string | undefined;
  USDC_ADDRESS: string;
  FACILITATOR_URL?: string | undefined;
  FACILITATOR_AUTH?: string | undefined;
  CDP_API_KEY_ID?: string | undefined;
  CDP_API_KEY_SECRET?: string | undefined;
}

/** The settler the configuration asks for; config.ts has already required what each one needs. */
export function settlerFromConfig(config: SettlerSettings): Settler {
  if (config.PAYMENT_MODE === 'mock') return createMockSettler();
  if (config.SETTLEMENT === 'chain') {
    return createChainSettler({
      rpcUrl: config.RPC_URL!,
      privateKey: config.SETTLER_PRIVATE_KEY as Hex,
      usdc: config.USDC_ADDRESS as Address,
    });
  }
  // Live mode always has RPC_URL (config.ts defaults it): the only definite answer to a /settle
  // that went quiet is the token's authorizationState, and a /settle success is believed only
  // once our own RPC shows the transfer to PAY_TO (chain-proof.ts).
  const usdc = config.USDC_ADDRESS as Address;
  const reader = config.RPC_URL ? createProofReader({ rpcUrl: config.RPC_URL, usdc }) : undefined;
  return createFacilitatorSettler({
    url: config.FACILITATOR_URL!,
    auth: config.FACILITATOR_AUTH,
    perRequest:
      config.CDP_API_KEY_ID && config.CDP_API_KEY_SECRET
        ? cdpJwtHeaders({ keyId: config.CDP_API_KEY_ID, secret: config.CDP_API_KEY_SECRET })
        : undefined,
    status: reader?.status,
    confirm: reader?.confirm,
    used: config.RPC_URL ? authorizationUsed(config.RPC_URL, usdc) : undefined,
  });
}

/**
 * authorizationState(payer, nonce) at the latest block, as one eth_call with no retry: what a
 * facilitator's refusal costs (settlers/facilitator.ts). Throws when the RPC does not answer.
 */
function authorizationUsed(rpcUrl: string, usdc: Address) {
  const client = createPublicClient({
    chain: chainFor(rpcUrl),
    transport: http(rpcUrl, { timeout: 10_000, retryCount: 0 }),
  });
  return (payer: Address, nonce: Hex): Promise<boolean> =>
    client.readContract({ address: usdc, abi: EIP3009_ABI, functionName: 'authorizationState', args: [payer, nonce] });
}

/** Live mode with RPC_URL: smart-wallet signatures (ERC-1271, ERC-6492) verify through the chain. */
export function chainVerifierFromConfig(config: SettlerSettings): TypedDataVerifier | undefined {
  if (config.PAYMENT_MODE !== 'live' || !config.RPC_URL) return undefined;
  const client = createPublicClient({
    chain: chainFor(config.RPC_URL),
    transport: http(config.RPC_URL, { timeout: 10_000, retryCount: 1 }),
  });
  return {
    verifyTypedData: (args) => client.verifyTypedData(args),
    verifyMessage: (args) => client.verifyMessage(args),
  };
}
