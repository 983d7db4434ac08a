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
    settle: async (req) => ({ ok: true, txHash: mockTxHash(req.payer, req.authorization.nonce) }),
    // Nothing was ever submitted anywhere, so an interrupted mock settle charged nobody.
    lookup: async () => ({ found: null }),
  };
}
