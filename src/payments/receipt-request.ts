import { getTypesForEIP712Domain, recoverTypedDataAddress, type Hex } from 'viem';
import {
  RECEIPT_REQUEST_DOMAIN,
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REQUEST_TYPES,
  type ReceiptSignedKind,
  receiptTypedData,
} from '../../packages/isocast-client/src/receipt-typed-data.ts';
import { createSingleUse } from '../db/single-use.ts';
import type { Db } from '../db/open.ts';
import { SKEW_RULE } from '../lib/signed-request.ts';

/**
 * The buyer package's typed data, with the EIP712Domain type spelled out for clients calling eth_signTypedData_v4;
 * it names the server's origin, so a lookalike's signature is worth nothing.
 */
export function receiptTypedDataDoc(origin: string, kind: ReceiptSignedKind = RECEIPT_REQUEST_PRIMARY_TYPE) {
  return {
    domain: RECEIPT_REQUEST_DOMAIN,
    primaryType: kind,
    // Both kinds sign the same fields.
    types: {
      EIP712Domain: getTypesForEIP712Domain({ domain: RECEIPT_REQUEST_DOMAIN }),
      [kind]: RECEIPT_REQUEST_TYPES.ReceiptRequest,
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

/** Each (wallet, timestamp) once per kind (spec 8); a row older than twice the skew goes (stale anyway). */
export function createReceiptRequestStore(db: Db) {
  const table = (name: string) =>
    createSingleUse<{ wallet: string; timestamp: number; used_at: number }>(db, {
      table: name,
      key: ['wallet', 'timestamp'],
      columns: ['wallet', 'timestamp', 'used_at'],
      agedBy: { column: 'timestamp', unit: 's' },
    });
  const uses = { request: table('receipt_requests'), revocation: table('receipt_revocations') };
  return {
    /** True the first time (wallet, timestamp) is used for `kind`; run inside the caller's transaction. */
    consume(u: { kind: keyof typeof uses; wallet: string; timestamp: number; nowMs: number }): boolean {
      return uses[u.kind].consume({ wallet: u.wallet, timestamp: u.timestamp, used_at: u.nowMs }, u.nowMs);
    },
  };
}
