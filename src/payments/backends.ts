import type { Config } from '../config.ts';
import { createMockSettler } from './settlers/mock.ts';
import type { Settler } from './settlers/settler.ts';
import type { TypedDataVerifier } from './verify.ts';

export type PaymentBackends = { settler: Settler; chainVerifier?: TypedDataVerifier };

/**
 * The settler and the on-chain signature verifier the configuration asks for. Mock mode (the
 * quick start) never loads the live ones: they bring viem's RPC client, whose module evaluation
 * was about a tenth of the binary's start (docs/performance.md, start-up).
 */
export async function paymentBackends(config: Config): Promise<PaymentBackends> {
  if (config.PAYMENT_MODE === 'mock') return { settler: createMockSettler() };
  const live = await import('./settlers/from-config.ts');
  return { settler: live.settlerFromConfig(config), chainVerifier: live.chainVerifierFromConfig(config) };
}
