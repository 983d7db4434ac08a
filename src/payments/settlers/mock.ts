import { encodePacked, keccak256, type Address, type Hex } from 'viem';
import type { Settler } from './settler.ts';

/**
 * Mock mode: signatures were verified for real upstream, but nothing moves on chain. The
 * "transaction hash" is keccak256(payer, nonce), so a replay maps to the same hash.
 */
export function mockTxHash(payer: Address, nonce: Hex): Hex {
  return keccak256(encodePacked(['address', 'bytes32'], [payer, nonce]));
}

export function createMockSettler(): Settler {
  return {
    kind: 'mock',
    maxSettleMs: 0,
    settle: async (req) => ({ ok: true, txHash: mockTxHash(req.payer, req.authorization.nonce) }),
    // Nothing is ever submitted anywhere, so an interrupted mock settle charged nobody, for certain.
    status: async () => ({ state: 'unused', expired: true }),
  };
}
