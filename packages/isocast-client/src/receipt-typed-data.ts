import type { Hex } from 'viem';

/**
 * The EIP-712 messages a wallet signs about its receipt tokens: `ReceiptRequest` for a new token
 * (`POST /v1/receipts`, for a buyer who lost theirs) and `ReceiptRevocation` to revoke every token
 * it has (`POST /v1/receipts/revoke`). Both name the deployment: `origin` is the server's own
 * origin (scheme://host[:port]), so a signature given to one server (a lookalike a client was
 * pointed at) is worth nothing on another. The server verifies with these same definitions.
 */
export const RECEIPT_REQUEST_DOMAIN = { name: 'Isocast', version: '1', chainId: 8453 } as const;

export const RECEIPT_REQUEST_PRIMARY_TYPE = 'ReceiptRequest' as const;
export const RECEIPT_REVOCATION_PRIMARY_TYPE = 'ReceiptRevocation' as const;
export type ReceiptSignedKind = typeof RECEIPT_REQUEST_PRIMARY_TYPE | typeof RECEIPT_REVOCATION_PRIMARY_TYPE;

const FIELDS = [
  { name: 'wallet', type: 'address' },
  { name: 'origin', type: 'string' },
  { name: 'timestamp', type: 'uint256' },
] as const;

export const RECEIPT_REQUEST_TYPES = { ReceiptRequest: FIELDS } as const;
export const RECEIPT_REVOCATION_TYPES = { ReceiptRevocation: FIELDS } as const;
// Both in one types object for signing: EIP-712 encodes only the primary type and what it references.
const SIGNING_TYPES = { ReceiptRequest: FIELDS, ReceiptRevocation: FIELDS } as const;

/** The origin a signature names: `new URL(url).origin` (lower-case host, no default port, no path). */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** The fields a receipt request or revocation signs: the wallet, the server's origin, unix seconds. */
export type ReceiptMessage = { wallet: string; origin: string; timestamp: number | bigint };

/** Typed data for viem's signTypedData / verifyTypedData. */
export function receiptTypedData(kind: ReceiptSignedKind, { wallet, origin, timestamp }: ReceiptMessage) {
  return {
    domain: RECEIPT_REQUEST_DOMAIN,
    types: SIGNING_TYPES,
    primaryType: kind,
    // Address case does not change the encoded bytes; lowercase skips viem's checksum check.
    message: { wallet: wallet.toLowerCase() as Hex, origin, timestamp: BigInt(timestamp) },
  };
}

/** Typed data of a ReceiptRequest. */
export const receiptRequestTypedData = (message: ReceiptMessage) =>
  receiptTypedData(RECEIPT_REQUEST_PRIMARY_TYPE, message);
