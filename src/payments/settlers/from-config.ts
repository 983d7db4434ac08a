import { createPublicClient, http, type Address, type Hex } from 'viem';
import type { Config } from '../../config.ts';
import type { TypedDataVerifier } from '../verify.ts';
import { chainFor, createAuthorizationLookup, createChainSettler } from './chain.ts';
import { createFacilitatorSettler } from './facilitator.ts';
import { createMockSettler } from './mock.ts';
import type { Settler } from './settler.ts';

/** The settler the configuration asks for; config.ts has already required what each one needs. */
export function settlerFromConfig(config: Config): Settler {
  if (config.PAYMENT_MODE === 'mock') return createMockSettler();
  if (config.SETTLEMENT === 'chain') {
    return createChainSettler({
      rpcUrl: config.RPC_URL!,
      privateKey: config.SETTLER_PRIVATE_KEY as Hex,
      usdc: config.USDC_ADDRESS as Address,
    });
  }
  // Live mode always has RPC_URL (config.ts defaults it): the only definite answer to a /settle
  // that went quiet is the token's authorizationState.
  const status = config.RPC_URL
    ? createAuthorizationLookup({ rpcUrl: config.RPC_URL, usdc: config.USDC_ADDRESS as Address }).status
    : undefined;
  return createFacilitatorSettler({ url: config.FACILITATOR_URL!, auth: config.FACILITATOR_AUTH, status });
}

/** Live mode with RPC_URL: smart-wallet signatures (ERC-1271, ERC-6492) verify through the chain. */
export function chainVerifierFromConfig(config: Config): TypedDataVerifier | undefined {
  if (config.PAYMENT_MODE !== 'live' || !config.RPC_URL) return undefined;
  const client = createPublicClient({
    chain: chainFor(config.RPC_URL),
    transport: http(config.RPC_URL, { timeout: 10_000, retryCount: 1 }),
  });
  return { verifyTypedData: (args) => client.verifyTypedData(args) };
}
