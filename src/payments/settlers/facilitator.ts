import { z } from 'zod';
import type { Address, Hex } from 'viem';
import { UpstreamError } from '../../lib/errors.ts';
import { createJsonPost } from './json-post.ts';
import type { AuthorizationStatus, SettleOutcome, SettleRequest, Settler } from './settler.ts';

/**
 * An x402 v1 facilitator: `POST /settle` (after `POST /verify` unless our own recovery already
 * proved the signature, below), each with `{x402Version: 1, paymentPayload, paymentRequirements}`.
 * Answers are parsed with zod; a refusal, an HTTP error, garbage or a timeout is a failed (or, for
 * /settle, in-doubt) settlement with a reason, never a crash. Payment payloads go only to the
 * facilitator, never to a log. Calls go over one keep-alive connection pool (json-post.ts).
 */
const VerifyResponse = z
  .object({
    isValid: z.boolean(),
    invalidReason: z.string().nullish(),
    invalidMessage: z.string().nullish(),
    payer: z.string().nullish(),
  })
  .loose();

const SettleResponse = z
  .object({
    success: z.boolean(),
    errorReason: z.string().nullish(),
    errorMessage: z.string().nullish(),
    transaction: z.string().nullish(),
    network: z.string().nullish(),
    payer: z.string().nullish(),
  })
  .loose();

export type FacilitatorOptions = {
  url: string;
  /** Sent verbatim as the Authorization header when set (FACILITATOR_AUTH). */
  auth?: string;
  verifyTimeoutMs?: number;
  settleTimeoutMs?: number;
  /**
   * The token's own answer about (payer, nonce) over RPC_URL (live mode always has one). Without
   * it a `/settle` that went quiet stays in doubt: nothing else can say whether money moved.
   */
  status?: (payer: Address, nonce: Hex, validBefore: number) => Promise<AuthorizationStatus>;
  /**
   * `unless-recovered` (the default): no `/verify` when the signature recovered locally to
   * `authorization.from` (`SettleRequest.signatureRecovered`); the facilitator's `/settle` runs
   * the same verification and refuses before any transfer (docs/decisions.md, "Skipping /verify").
   * `always`: `/verify` first for every payment.
   */
  verify?: 'always' | 'unless-recovered';
};

export const VERIFY_TIMEOUT_MS = 10_000;
export const SETTLE_TIMEOUT_MS = 30_000;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function createFacilitatorSettler(opts: FacilitatorOptions): Settler {
  const headers: Record<string, string> = opts.auth ? { authorization: opts.auth } : {};
  const verifyTimeoutMs = opts.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS;
  const settleTimeoutMs = opts.settleTimeoutMs ?? SETTLE_TIMEOUT_MS;
  const status = async (payer: Address, nonce: Hex, validBefore: number): Promise<AuthorizationStatus> =>
    opts.status
      ? opts.status(payer, nonce, validBefore)
      : { state: 'unknown', reason: 'no RPC_URL to ask the token contract' };

  const client = createJsonPost('facilitator', opts.url, headers);
  const verifyAlways = opts.verify === 'always';

  async function call<T>(
    path: '/verify' | '/settle',
    req: SettleRequest,
    schema: z.ZodType<T>,
    timeoutMs: number,
  ): Promise<T> {
    const body = { x402Version: 1, paymentPayload: req.payload, paymentRequirements: req.requirements };
    const res = await client.post(path, body, timeoutMs);
    const parsed = schema.safeParse(res.json);
    // Facilitators answer refusals with 400 and a normal body, so the body decides, not the status.
    if (parsed.success) return parsed.data;
    throw new UpstreamError('facilitator', `${path} answered HTTP ${res.status} without a valid x402 body`, {
      httpStatus: res.status,
    });
  }

  /**
   * After /settle was called and did not clearly succeed, the token contract decides. `refused`:
   * the facilitator answered success: false; with no transaction submitted and the chain agreeing
   * (or no chain to ask) that is its definite word that nothing moved. A transaction it submitted
   * that reverted is public calldata that can still land before validBefore: in doubt.
   */
  async function decide(
    req: SettleRequest,
    reason: string,
    submitted: Hex | null,
    refused: boolean,
  ): Promise<SettleOutcome> {
    const st = await status(req.payer, req.authorization.nonce, Number(req.authorization.validBefore));
    // Used, yet /settle refused it with no transaction: by its own word this call moved nothing,
    // so the transfer was someone else's (an authorization read from the chain): no receipt token.
    if (st.state === 'used')
      return { ok: true, txHash: st.txHash, ...(refused && !submitted ? { alreadySettled: true } : {}) };
    if (refused && !submitted && (st.state === 'unused' || !opts.status)) return { ok: false, inDoubt: false, reason };
    return {
      ok: false,
      inDoubt: true,
      reason: st.state === 'unknown' ? `${reason}; ${st.reason}` : reason,
      ...(submitted ? { txHash: submitted } : {}),
    };
  }

  return {
    kind: 'facilitator',
    maxSettleMs: verifyTimeoutMs + settleTimeoutMs + 15_000,
    async settle(req) {
      // A retry of a payment whose earlier /settle went quiet: the chain knows if it landed. A
      // fresh claim had nothing sent before, and asking would cost two RPC calls per purchase; an
      // authorization someone else already used is refused by /settle and found by decide().
      if (!req.fresh) {
        const earlier = await status(req.payer, req.authorization.nonce, Number(req.authorization.validBefore));
        if (earlier.state === 'used') return { ok: true, txHash: earlier.txHash, alreadySettled: true };
        if (earlier.state === 'unused' && earlier.expired)
          return { ok: false, inDoubt: false, reason: 'authorization expired before it could be settled' };
      }
      // /settle verifies again before submitting anything; /verify only adds a round trip when our
      // own recovery already proved the signature (docs/decisions.md).
      if (verifyAlways || !req.signatureRecovered) {
        try {
          const v = await call('/verify', req, VerifyResponse, verifyTimeoutMs);
          if (!v.isValid)
            return {
              ok: false,
              inDoubt: false,
              reason: `facilitator refused verification: ${v.invalidReason ?? v.invalidMessage ?? 'no reason given'}`,
            };
        } catch (err) {
          // /verify moves no money: a failed verify charged nobody.
          return { ok: false, inDoubt: false, reason: `facilitator: ${(err as Error).message}` };
        }
      }
      let s: z.infer<typeof SettleResponse>;
      try {
        s = await call('/settle', req, SettleResponse, settleTimeoutMs);
      } catch (err) {
        // No connection was ever made (refused, or the name did not resolve): not one byte of the
        // request left, so nothing can have been submitted. A definite failure, truly not charged.
        if (neverConnected(err))
          return { ok: false, inDoubt: false, reason: `facilitator unreachable: ${(err as Error).message}` };
        // The request reached /settle and no clear answer came back: the transfer may have been
        // submitted. In doubt until the token contract says otherwise.
        return decide(req, `facilitator /settle gave no clear answer (${(err as Error).message})`, null, false);
      }
      const tx = s.transaction && TX_HASH.test(s.transaction) ? (s.transaction.toLowerCase() as Hex) : null;
      if (!s.success)
        return decide(
          req,
          `facilitator settlement failed: ${s.errorReason ?? s.errorMessage ?? 'no reason given'}`,
          tx,
          true,
        );
      if (!tx) return decide(req, 'facilitator reported success without a transaction hash', null, false);
      return { ok: true, txHash: tx };
    },
    status,
    close: client.close,
  };
}

/** Errors raised before a connection existed: the request cannot have been delivered. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);
function neverConnected(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && NOT_CONNECTED.has(code);
}
