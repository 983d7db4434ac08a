import { z } from 'zod';
import type { Hex } from 'viem';
import { UpstreamError } from '../../lib/errors.ts';
import { httpRequest } from '../../lib/http-client.ts';
import type { SettleRequest, SettlementLookup, Settler } from './settler.ts';

/**
 * An x402 v1 facilitator: `POST /verify` then `POST /settle`, each with
 * `{x402Version: 1, paymentPayload, paymentRequirements}`. Answers are parsed with zod; a
 * refusal, an HTTP error, garbage or a timeout is a failed settlement with a reason, never a
 * crash. Payment payloads go only to the facilitator, never to a log.
 */
const VerifyResponse = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().nullish(),
  invalidMessage: z.string().nullish(),
  payer: z.string().nullish(),
}).loose();

const SettleResponse = z.object({
  success: z.boolean(),
  errorReason: z.string().nullish(),
  errorMessage: z.string().nullish(),
  transaction: z.string().nullish(),
  network: z.string().nullish(),
  payer: z.string().nullish(),
}).loose();

export type FacilitatorOptions = {
  url: string;
  /** Sent verbatim as the Authorization header when set (FACILITATOR_AUTH). */
  auth?: string;
  verifyTimeoutMs?: number;
  settleTimeoutMs?: number;
  /**
   * On-chain lookup of (payer, nonce) (set when RPC_URL is configured). Without it a facilitator
   * cannot say whether a `/settle` that timed out moved the money.
   */
  lookup?: (payer: Hex, nonce: Hex) => Promise<SettlementLookup>;
};

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function createFacilitatorSettler(opts: FacilitatorOptions): Settler {
  const headers: Record<string, string> = opts.auth ? { authorization: opts.auth } : {};
  const base = opts.url.replace(/\/+$/, '');

  async function call<T>(path: '/verify' | '/settle', req: SettleRequest, schema: z.ZodType<T>, timeoutMs: number): Promise<T> {
    const body = { x402Version: 1, paymentPayload: req.payload, paymentRequirements: req.requirements };
    const res = await httpRequest({ upstream: 'facilitator', url: `${base}${path}`, method: 'POST', headers, body, timeoutMs });
    const parsed = schema.safeParse(res.json);
    // Facilitators answer refusals with 400 and a normal body, so the body decides, not the status.
    if (parsed.success) return parsed.data;
    throw new UpstreamError('facilitator', `${path} answered HTTP ${res.status} without a valid x402 body`, { httpStatus: res.status });
  }

  return {
    kind: 'facilitator',
    async settle(req) {
      // A retry of a payment whose earlier /settle went quiet: the chain knows if it landed.
      if (opts.lookup) {
        try {
          const earlier = await opts.lookup(req.payer, req.authorization.nonce);
          if ('found' in earlier && earlier.found) return { ok: true, txHash: earlier.found, alreadySettled: true };
        } catch {
          // The RPC being down must not block settlement; the facilitator checks the nonce too.
        }
      }
      try {
        const v = await call('/verify', req, VerifyResponse, opts.verifyTimeoutMs ?? 10_000);
        if (!v.isValid) return { ok: false, reason: `facilitator refused verification: ${v.invalidReason ?? v.invalidMessage ?? 'no reason given'}` };
      } catch (err) {
        return { ok: false, reason: `facilitator: ${(err as Error).message}` };
      }
      let s: z.infer<typeof SettleResponse>;
      try {
        s = await call('/settle', req, SettleResponse, opts.settleTimeoutMs ?? 30_000);
      } catch (err) {
        // The request reached /settle and no clear answer came back: the transfer may have been
        // submitted. The claim stays open so a retry (or the next start) looks it up instead of
        // reporting a possibly-charged payer as not charged and forgetting them.
        return { ok: false, inDoubt: true, reason: `facilitator /settle gave no clear answer (${(err as Error).message}); retry the same payment to resolve it` };
      }
      if (!s.success) return { ok: false, reason: `facilitator settlement failed: ${s.errorReason ?? s.errorMessage ?? 'no reason given'}` };
      if (!s.transaction || !TX_HASH.test(s.transaction)) return { ok: false, inDoubt: true, reason: 'facilitator reported success without a transaction hash; retry the same payment to resolve it' };
      return { ok: true, txHash: s.transaction.toLowerCase() as Hex };
    },
    lookup: async (payer, nonce) => (opts.lookup ? opts.lookup(payer, nonce) : { unknown: true }),
  };
}
