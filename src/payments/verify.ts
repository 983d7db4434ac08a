import { isAddressEqual, size, type Address, type Hex } from 'viem';
import { authorizationTypedData } from '../x402/eip3009.ts';
import type { Authorization } from '../x402/networks.ts';
import { recoverAuthorizationSigner } from './eip3009-recover.ts';
import { MAX_AUTH_LIFETIME_S } from '../../packages/isocast-client/src/binding.ts';
import type { DecodedPayment } from '../x402/x-payment.ts';

/** Verification of an `exact` payment before anything settles (spec order: verify, sanctions, binding). */
export type TypedDataVerifier = {
  verifyTypedData(
    args: { address: Address; signature: Hex } & ReturnType<typeof authorizationTypedData>,
  ): Promise<boolean>;
  /** The same client's EIP-191 message check (ERC-1271/6492 aware): wallet sign-ins (siwx.ts). */
  verifyMessage?(args: { address: Address; message: string; signature: Hex }): Promise<boolean>;
};

type VerifyTerms = {
  usdc: Address;
  payTo: Address;
  priceMicro: number;
  nowSeconds: number;
  chainVerifier?: TypedDataVerifier;
};

/** `recovered`: the signature recovered (ECDSA) to `from`, rather than passing a contract wallet's check. */
type VerifyResult = { ok: true; payer: Address; recovered: boolean } | { ok: false; reason: string };

/** Payee and amount, the refusal's reason or null: no signature recovery, so they run before anything costly. */
export function checkPayee(a: Authorization, terms: Pick<VerifyTerms, 'payTo' | 'priceMicro'>): string | null {
  if (!isAddressEqual(a.to, terms.payTo)) return 'authorization.to is not the settlement wallet';
  if (a.value !== BigInt(terms.priceMicro)) return `authorization.value must be exactly ${terms.priceMicro}`;
  return null;
}

/** The validity window, for a payment not seen before (a known one answers whatever the clock says). */
export function checkWindow(a: Authorization, nowSeconds: number): string | null {
  const now = BigInt(nowSeconds);
  if (a.validAfter > now) return 'authorization is not yet valid';
  if (a.validBefore <= now) return 'authorization has expired';
  if (a.validBefore - now > BigInt(MAX_AUTH_LIFETIME_S))
    return `authorization.validBefore is more than ${MAX_AUTH_LIFETIME_S} s away`;
  return null;
}

/** The payer is whoever the signature recovers to (or the contract wallet vouching), never a client-claimed field. */
export async function verifySignature(
  p: DecodedPayment,
  terms: Pick<VerifyTerms, 'usdc' | 'chainVerifier'>,
): Promise<VerifyResult> {
  const a = p.authorization;
  const payer = a.from.toLowerCase() as Address;
  if (size(p.signature) === 65) {
    // A malformed 65-byte signature (null) can still be a contract wallet's; fall through.
    const recovered = await recoverAuthorizationSigner(terms.usdc, a, p.signature);
    // Both lowercase: the recovery answers lowercase, and `from` passed the address format check.
    if (recovered && recovered === payer) return { ok: true, payer, recovered: true };
  }
  // Else a contract wallet at `from` may vouch for it (ERC-1271/6492, on chain); a failed call is a no.
  try {
    const v = terms.chainVerifier;
    if (
      v &&
      (await v.verifyTypedData({ address: a.from, signature: p.signature, ...authorizationTypedData(terms.usdc, a) }))
    )
      return { ok: true, payer, recovered: false };
  } catch {}
  return { ok: false, reason: 'signature does not match authorization.from' };
}

/** A resent in-doubt header: the cheap terms first, then the signature. */
export async function verifyPayment(p: DecodedPayment, terms: VerifyTerms): Promise<VerifyResult> {
  const reason = checkPayee(p.authorization, terms) ?? checkWindow(p.authorization, terms.nowSeconds);
  return reason === null ? verifySignature(p, terms) : { ok: false, reason };
}
