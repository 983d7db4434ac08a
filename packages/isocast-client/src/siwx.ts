import type { ClientExtension } from '@x402/core/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import {
  createSIWxClientExtension,
  createSIWxPayload,
  encodeSIWxHeader,
  SIGN_IN_WITH_X,
  type EVMSigner,
  type SIWxExtension,
} from '@x402/extensions/sign-in-with-x';
import { BASE_CAIP2 } from './chain.ts';

/**
 * Sign in with the wallet that paid (x402 v2 `sign-in-with-x`): a returning buyer reads its
 * signals with one message signature instead of a receipt token or a new payment.
 *
 * `@isocast/client/siwx` (a subpath: it needs the optional peer `@x402/extensions`, the main
 * entry does not). With a stock client, register the library's extension beside the scheme; it answers every 402
 * that declares the extension with a signed SIGN-IN-WITH-X retry, and pays only if that retry
 * still answers 402 (nothing bought yet, or the bundle is exhausted):
 *
 *   const client = new x402Client();
 *   registerIsocast(client, new IsocastExactScheme(account, { payTo }));
 *   client.registerExtension(isocastSignIn(account));
 *   const payFetch = wrapFetchWithPayment(fetch, client);
 *
 * Without one, `signInHeader` turns a 402's PAYMENT-REQUIRED into the header value.
 */
export const SIWX_HEADER = SIGN_IN_WITH_X;

/** The `@x402/extensions` client extension for an account (any viem account that signs messages). */
export function isocastSignIn(account: EVMSigner): ClientExtension {
  return createSIWxClientExtension({ signers: [account] });
}

/**
 * The SIGN-IN-WITH-X value answering a 402, or null when the 402 declares no sign-in on Base.
 * `responseUrl` is the URL the 402 came from: the library refuses (throws) a sign-in whose domain
 * or uri names another origin, so a lookalike cannot collect a signature for the real server.
 */
export async function signInHeader(
  paymentRequiredHeader: string,
  account: EVMSigner,
  responseUrl: string | URL,
): Promise<string | null> {
  const required = decodePaymentRequiredHeader(paymentRequiredHeader);
  const declared = required.extensions?.[SIGN_IN_WITH_X] as SIWxExtension | undefined;
  const chain = declared?.supportedChains?.find((c) => c.chainId === BASE_CAIP2 && c.type === 'eip191');
  if (!declared || !chain) return null;
  const payload = await createSIWxPayload(
    { ...declared.info, chainId: chain.chainId, type: chain.type },
    account,
    responseUrl,
  );
  return encodeSIWxHeader(payload);
}
