import type { Hex } from 'viem';
import { RECEIPT_REQUEST_DOMAIN } from '../../packages/isocast-client/src/receipt-typed-data.ts';

/** Field order is part of the type hash: a signature over a reordered type does not verify. */
const DELIVERY_TYPES = {
  MessengerDelivery: [
    { name: 'wallet', type: 'address' },
    { name: 'chatId', type: 'string' },
    { name: 'citySlug', type: 'string' },
    { name: 'action', type: 'string' },
    { name: 'timestamp', type: 'uint256' },
  ],
} as const;

export type DeliveryAction = 'set' | 'delete';

/** The EIP-712 message setting or deleting a chat (spec 4.2), in the receipts' domain; absent strings sign as ''. */
export function deliveryTypedData(
  m: Record<'wallet' | 'chatId' | 'citySlug', string> & { action: DeliveryAction; timestamp: number },
) {
  return {
    domain: RECEIPT_REQUEST_DOMAIN,
    types: DELIVERY_TYPES,
    primaryType: 'MessengerDelivery' as const,
    // Address case does not change the encoded bytes; lowercasing skips viem's checksum check, so a
    // body may spell the wallet in any case.
    message: { ...m, wallet: m.wallet.toLowerCase() as Hex, timestamp: BigInt(m.timestamp) },
  };
}
