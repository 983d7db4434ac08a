import { recoverTypedDataAddress, type Hex } from 'viem';

/**
 * The EIP-712 message a wallet signs to get a new receipt token (`POST /v1/receipts`), for a
 * buyer who lost theirs: a replayed payment header never mints one. The buyer client imports
 * these constants, and the discovery documents publish them, so all three agree.
 */
export const RECEIPT_REQUEST_DOMAIN = { name: 'Isocast', version: '1', chainId: 8453 } as const;

export const RECEIPT_REQUEST_PRIMARY_TYPE = 'ReceiptRequest' as const;

export const RECEIPT_REQUEST_TYPES = {
  ReceiptRequest: [
    { name: 'wallet', type: 'address' },
    { name: 'timestamp', type: 'uint256' },
  ],
} as const;

/** The same, with the EIP712Domain type spelled out, for clients calling eth_signTypedData_v4. */
export const RECEIPT_REQUEST_TYPED_DATA_DOC = {
  domain: RECEIPT_REQUEST_DOMAIN,
  primaryType: RECEIPT_REQUEST_PRIMARY_TYPE,
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
    ],
    ...RECEIPT_REQUEST_TYPES,
  },
  notes: 'timestamp is unix seconds, within 600 s of server time; each (wallet, timestamp) is honoured once.',
} as const;

/** Typed data for viem's signTypedData / verifyTypedData. */
export function receiptRequestTypedData(wallet: string, timestamp: number | bigint) {
  return {
    domain: RECEIPT_REQUEST_DOMAIN,
    types: RECEIPT_REQUEST_TYPES,
    primaryType: RECEIPT_REQUEST_PRIMARY_TYPE,
    // Address case does not change the encoded bytes; lowercase skips viem's checksum check.
    message: { wallet: wallet.toLowerCase() as Hex, timestamp: BigInt(timestamp) },
  };
}

/** True when the signature recovers to `wallet`; malformed signatures are simply false. */
export async function verifyReceiptRequest(wallet: string, timestamp: number, signature: Hex): Promise<boolean> {
  try {
    const signer = await recoverTypedDataAddress({ ...receiptRequestTypedData(wallet, timestamp), signature });
    return signer.toLowerCase() === wallet.toLowerCase();
  } catch {
    return false;
  }
}
