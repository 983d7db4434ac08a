import type { EVMMessageVerifier, SIWxPayload } from '@x402/extensions/sign-in-with-x';
import type { Db } from '../db/open.ts';
import { createSingleUse, type CrossNodeUses } from '../db/single-use.ts';
import type { Clock } from '../lib/clock.ts';
import { sanctioned, siwxRefused, siwxUnverifiable } from '../lib/api-errors.ts';
import { ApiError } from '../lib/errors.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { checkSiwxMessage, SIWX_ERRORS } from './siwx.ts';
import { MAX_HEADER_CHARS } from '../x402/x-payment.ts';

type SiwxSignInDeps = {
  db: Db;
  clock: Clock;
  /** BASE_URL: the domain and uri every sign-in must name. */
  baseUrl: string;
  sanctions: SanctionsList;
  /** With RPC_URL: viem's `verifyMessage`, so smart wallets (ERC-1271, ERC-6492) sign in too. */
  verifyMessage?: EVMMessageVerifier;
  limitWallet?: (wallet: string) => void;
  /** With read nodes: a nonce is refused on every node once any node took it (db/single-use.ts). */
  crossNode?: CrossNodeUses;
};

/** The library's parser and verifier, evaluated on the first sign-in (siwx-verify.ts). */
let library: Promise<typeof import('./siwx-verify.ts')> | undefined;
const siwxLibrary = () => (library ??= import('./siwx-verify.ts'));

/** A `SIGN-IN-WITH-X` header to the wallet it proves; its (wallet, nonce) is consumed, so each header reads once. */
export function createSiwxSignIn(deps: SiwxSignInDeps) {
  const nonces = createSingleUse<{ wallet: string; nonce: string; expires_at: number; used_at: number }>(
    deps.db,
    {
      table: 'siwx_nonces',
      key: ['wallet', 'nonce'],
      columns: ['wallet', 'nonce', 'expires_at', 'used_at'],
      agedBy: { column: 'expires_at', unit: 'ms' },
    },
    deps.crossNode,
  );

  /** ECDSA first (no RPC); only a signature that does not recover goes to the chain client. */
  async function signer(p: SIWxPayload): Promise<string> {
    const { verifySIWxSignature } = await siwxLibrary();
    try {
      const local = await verifySIWxSignature(p);
      if (local.isValid) return local.payer;
      if (deps.verifyMessage) {
        const onChain = await verifySIWxSignature(p, { evmVerifier: deps.verifyMessage });
        if (onChain.isValid) return onChain.payer;
        if (onChain.invalidReason === 'invalid_siwx_verifier_error') throw siwxUnverifiable(onChain.invalidReason);
      }
      throw siwxRefused({ error: SIWX_ERRORS.signature, code: 'invalid_siwx_signature' });
    } catch (err) {
      if (err instanceof ApiError) throw err;
      // The SIWE formatter refuses fields EIP-4361 forbids (a domain with spaces, say).
      throw siwxRefused({ error: SIWX_ERRORS.malformed, code: 'invalid_siwx_message', reason: (err as Error).message });
    }
  }

  return async function signIn(header: string): Promise<string> {
    if (header.length > MAX_HEADER_CHARS)
      throw siwxRefused({ error: SIWX_ERRORS.malformed, code: 'invalid_siwx_header', reason: 'header too long' });
    const { parseSIWxHeader } = await siwxLibrary();
    let payload: SIWxPayload;
    try {
      payload = parseSIWxHeader(header.trim());
    } catch (err) {
      throw siwxRefused({ error: SIWX_ERRORS.malformed, code: 'invalid_siwx_header', reason: (err as Error).message });
    }
    const refusal = checkSiwxMessage(payload, { baseUrl: deps.baseUrl, nowMs: deps.clock.now() });
    if (refusal) throw siwxRefused(refusal);
    const wallet = (await signer(payload)).toLowerCase();
    deps.limitWallet?.(wallet);
    if (deps.sanctions.has(wallet)) throw sanctioned();
    // checkSiwxMessage made expirationTime required and parseable.
    const nowMs = deps.clock.now();
    const use = { wallet, nonce: payload.nonce, expires_at: Date.parse(payload.expirationTime!), used_at: nowMs };
    const claimed = nonces.has({ wallet, nonce: payload.nonce }) || (await nonces.claimAcross(use));
    if (!claimed || !nonces.consume(use, nowMs))
      throw siwxRefused({ error: SIWX_ERRORS.nonceUsed, code: 'invalid_siwx_nonce' });
    return wallet;
  };
}

export type SiwxSignIn = ReturnType<typeof createSiwxSignIn>;

/** Nonces whose sign-in has expired, for the retention job, on a server that sees too few sign-ins to drop them. */
export function createSiwxNoncePrune(db: Db): { run(cutoff: number, limit: number): { changes: number } } {
  return db.prepare(
    `DELETE FROM siwx_nonces WHERE (wallet, nonce) IN
      (SELECT wallet, nonce FROM siwx_nonces WHERE expires_at < ? LIMIT +?)`,
  );
}
