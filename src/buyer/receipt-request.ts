/**
 * The typed data a buyer signs to recover its receipt token (`POST /v1/receipts`): EIP-712 domain
 * Isocast/1 on chain 8453, primary type ReceiptRequest(wallet, timestamp). The server side
 * defines the same constants in src/payments/receipt-request.ts; this copy lets the client build
 * without it; once that server module exists, this file can re-export it.
 */
export const RECEIPT_REQUEST_DOMAIN = { name: 'Isocast', version: '1', chainId: 8453 } as const;

export const RECEIPT_REQUEST_TYPES = {
  ReceiptRequest: [
    { name: 'wallet', type: 'address' },
    { name: 'timestamp', type: 'uint256' },
  ],
} as const;

export const RECEIPT_REQUEST_PRIMARY_TYPE = 'ReceiptRequest' as const;
