import { z } from 'zod';
import type { Hex } from 'viem';
import { UpstreamError } from '../../lib/errors.ts';
import { httpRequest } from '../../lib/http-client.ts';
import type { SettleRequest, Settler } from './settler.ts';

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
      try {
        const v = await call('/verify', req, VerifyResponse, opts.verifyTimeoutMs ?? 10_000);
        if (!v.isValid) return { ok: false, reason: `facilitator refused verification: ${v.invalidReason ?? v.invalidMessage ?? 'no reason given'}` };
        const s = await call('/settle', req, SettleResponse, opts.settleTimeoutMs ?? 30_000);
        if (!s.success) return { ok: false, reason: `facilitator settlement failed: ${s.errorReason ?? s.errorMessage ?? 'no reason given'}` };
        if (!s.transaction || !TX_HASH.test(s.transaction)) return { ok: false, reason: 'facilitator reported success without a transaction hash' };
        return { ok: true, txHash: s.transaction.toLowerCase() as Hex };
      } catch (err) {
        return { ok: false, reason: `facilitator: ${(err as Error).message}` };
      }
    },
    // A facilitator has no lookup by authorization, so an interrupted settle cannot be resolved.
    lookup: async () => ({ unknown: true }),
  };
}
