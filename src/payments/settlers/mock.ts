import type { Address, Hex } from 'viem';
import { keccak256Hex } from '../../lib/keccak.ts';
import type { Settler } from './settler.ts';

/** Mock mode moves nothing: the "transaction hash" is keccak256(payer, nonce), so a replay maps to the same hash. */
export function mockTxHash(payer: Address, nonce: Hex): Hex {
  if (!/^0x[0-9a-fA-F]{40}$/.test(payer) || !/^0x[0-9a-fA-F]{64}$/.test(nonce))
    throw new TypeError('mockTxHash needs an address and a 32-byte nonce');
  const packed = Buffer.alloc(52);
  packed.write(payer.slice(2), 0, 'hex');
  packed.write(nonce.slice(2), 20, 'hex');
  return keccak256Hex(packed);
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
