import { recoverTypedDataAddress, type Hex } from 'viem';
import {
  RECEIPT_REQUEST_DOMAIN,
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REQUEST_TYPES,
  RECEIPT_REVOCATION_TYPES,
  type ReceiptSignedKind,
  receiptTypedData,
} from '../../packages/isocast-client/src/receipt-typed-data.ts';
import { SKEW_RULE } from '../lib/signed-request.ts';

/**
 * The EIP-712 messages a wallet signs about its receipt tokens (`ReceiptRequest`, `ReceiptRevocation`),
 * as the buyer package defines them. Both name the server's own origin, so a signature given to
 * one server (a lookalike a client was pointed at) is worth nothing on another.
 */
export {
  originOf,
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REVOCATION_PRIMARY_TYPE,
  type ReceiptSignedKind,
} from '../../packages/isocast-client/src/receipt-typed-data.ts';

const TYPES = { ReceiptRequest: RECEIPT_REQUEST_TYPES, ReceiptRevocation: RECEIPT_REVOCATION_TYPES } as const;

/** The typed data with the EIP712Domain type spelled out, for clients calling eth_signTypedData_v4. */
export function receiptTypedDataDoc(origin: string, kind: ReceiptSignedKind = RECEIPT_REQUEST_PRIMARY_TYPE) {
  return {
    domain: RECEIPT_REQUEST_DOMAIN,
    primaryType: kind,
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
      ],
      ...TYPES[kind],
    },
    message: { wallet: '0x<your wallet>', origin, timestamp: '<unix seconds>' },
    notes: `origin is exactly "${origin}" (this server; a signature naming another origin is refused); timestamp is unix seconds, ${SKEW_RULE}; each (wallet, timestamp) is honoured once.`,
  } as const;
}

/** True when the signature over (kind, wallet, origin, timestamp) recovers to `wallet`; malformed signatures are false. */
export async function verifyReceiptSigned(s: {
  kind: ReceiptSignedKind;
  wallet: string;
  origin: string;
  timestamp: number;
  signature: Hex;
}): Promise<boolean> {
  try {
    const signer = await recoverTypedDataAddress({
      ...receiptTypedData(s.kind, { wallet: s.wallet, origin: s.origin, timestamp: s.timestamp }),
      signature: s.signature,
    });
    return signer.toLowerCase() === s.wallet.toLowerCase();
  } catch {
    return false;
  }
}
