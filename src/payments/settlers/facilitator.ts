import type { Address, Hex } from 'viem';
import { NOT_SENT, createJsonPost, type JsonAnswer, type PerRequestHeaders } from '../../lib/http-client.ts';
import { classifySettle, classifyVerify } from './facilitator-answer.ts';
import { NAMES_KIND, createKindCache, type SupportedResult } from './negotiate.ts';
import type { TransactionProof } from './chain-proof.ts';
import {
  settledBefore,
  termsOf,
  type AuthorizationStatus,
  type PaymentTerms,
  type SettleOutcome,
  type SettleRequest,
  type Settler,
} from './settler.ts';
import { facilitatorBody } from '../../x402/v2.ts';

/**
 * An x402 facilitator: `POST /settle` (after `/verify` unless our recovery proved the signature)
 * in a kind its `/supported` lists. A refusal is "not charged" at once; only an unclear answer
 * waits for the chain (facilitator-answer.ts). Payloads never reach a log.
 */
type FacilitatorOptions = {
  url: string;
  /** Sent verbatim as the Authorization header when set (FACILITATOR_AUTH). */
  auth?: string;
  /** Headers made for each request instead (CDP's per-request JWT, cdp-auth.ts). */
  perRequest?: PerRequestHeaders;
  verifyTimeoutMs?: number;
  settleTimeoutMs?: number;
  /** The token's word on (payer, nonce); without it a `/settle` that went quiet stays in doubt. */
  status?: (payer: Address, nonce: Hex, terms: PaymentTerms) => Promise<AuthorizationStatus>;
  /** Judges a `/settle` success's transaction on our RPC: a facilitator's "success" is not proof PAY_TO was paid. */
  confirm?: (txHash: Hex, expect: { payer: Address; nonce: Hex; terms: PaymentTerms }) => Promise<TransactionProof>;
  /** authorizationState alone, one RPC call: what a refusal costs. Without it a refusal asks `status`. */
  used?: (payer: Address, nonce: Hex) => Promise<boolean>;
  /**
   * `unless-recovered` (default) skips `/verify` when our recovery proved the signature: `/settle`
   * runs the same check before any transfer (docs/decisions.md). `always`: `/verify` first.
   */
  verify?: 'always' | 'unless-recovered';
};

export const VERIFY_TIMEOUT_MS = 10_000;
export const SETTLE_TIMEOUT_MS = 30_000;
const SUPPORTED_TIMEOUT_MS = 5_000;

export function createFacilitatorSettler(opts: FacilitatorOptions): Settler {
  const headers: Record<string, string> = opts.auth ? { authorization: opts.auth } : {};
  const verifyTimeoutMs = opts.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS;
  const settleTimeoutMs = opts.settleTimeoutMs ?? SETTLE_TIMEOUT_MS;
  const status = async (payer: Address, nonce: Hex, terms: PaymentTerms): Promise<AuthorizationStatus> =>
    opts.status
      ? opts.status(payer, nonce, terms)
      : { state: 'unknown', reason: 'no RPC_URL to ask the token contract' };

  const client = createJsonPost('facilitator', { baseUrl: opts.url, headers, perRequest: opts.perRequest });
  // The last /supported reading: one that lists none of our kinds takes no payment (failover).
  let lastSupported: SupportedResult | null = null;
  const kinds = createKindCache({
    fetch: () => client.get('/supported', SUPPORTED_TIMEOUT_MS),
    now: Date.now,
    onResult: (r) => {
      lastSupported = r;
    },
  });
  const verifyAlways = opts.verify === 'always';

  async function post(path: '/verify' | '/settle', req: SettleRequest, timeoutMs: number): Promise<JsonAnswer> {
    return client.post(path, facilitatorBody(await kinds.current(), req), timeoutMs);
  }

  /** An answer that left the outcome unknown: the token contract decides. */
  async function decide(req: SettleRequest, reason: string, submitted: Hex | null): Promise<SettleOutcome> {
    const st = await status(req.payer, req.authorization.nonce, termsOf(req));
    if (st.state === 'used') return { ok: true, txHash: st.txHash };
    if (st.state === 'spent') return { ok: false, inDoubt: false, reason: `${reason}; ${st.reason}` };
    return {
      ok: false,
      inDoubt: true,
      reason: st.state === 'unknown' ? `${reason}; ${st.reason}` : reason,
      ...(submitted ? { txHash: submitted } : {}),
    };
  }

  /**
   * A refusal naming no transaction: money can still have moved only if the authorization was used
   * before it reached us. A used nonce is not a payment (a cancelled nonce is "already used" too):
   * only a transaction paying PAY_TO the price is credited, without a receipt token.
   */
  async function refused(req: SettleRequest, reason: string): Promise<SettleOutcome> {
    if (NAMES_KIND.test(reason)) kinds.invalidate();
    if (!opts.used && !opts.status) return { ok: false, inDoubt: false, reason };
    const a = req.authorization;
    try {
      if (opts.used && !(await opts.used(req.payer, a.nonce))) return { ok: false, inDoubt: false, reason };
    } catch (err) {
      // The chain did not answer: a prior use cannot be ruled out, so "not charged" is not known.
      return { ok: false, inDoubt: true, reason: `${reason}; rpc: ${(err as Error).message}` };
    }
    const st = await status(req.payer, a.nonce, termsOf(req));
    if (st.state === 'used') return { ok: true, txHash: st.txHash, alreadySettled: true };
    if (st.state === 'spent') return { ok: false, inDoubt: false, reason: `${reason}; ${st.reason}` };
    if (st.state === 'unused') return { ok: false, inDoubt: false, reason };
    return { ok: false, inDoubt: true, reason: `${reason}; ${st.reason}` };
  }

  /** A `/settle` success, checked against our own RPC: PAY_TO must have received the price. */
  async function settled(req: SettleRequest, txHash: Hex): Promise<SettleOutcome> {
    if (!opts.confirm) return { ok: true, txHash };
    const proof = await opts.confirm(txHash, { payer: req.payer, nonce: req.authorization.nonce, terms: termsOf(req) });
    if (proof.state === 'used') return { ok: true, txHash };
    if (proof.state === 'spent')
      return { ok: false, inDoubt: false, reason: `facilitator reported ${txHash}; ${proof.reason}` };
    const why = proof.state === 'unknown' ? proof.reason : 'its receipt does not show the transfer';
    return decide(req, `facilitator reported ${txHash} but ${why}`, txHash);
  }

  return {
    kind: 'facilitator',
    maxSettleMs: SUPPORTED_TIMEOUT_MS + verifyTimeoutMs + settleTimeoutMs + 15_000,
    async settle(req) {
      // Only a retry asks the chain first: for a fresh claim it would cost two RPC calls per
      // purchase, and an authorization used elsewhere is refused by /settle and found by refused().
      if (!req.fresh) {
        const earlier = settledBefore(await status(req.payer, req.authorization.nonce, termsOf(req)));
        if (earlier) return earlier;
      }
      // Its /supported lists none of our kinds: nothing is sent (the next facilitator may take it).
      await kinds.current();
      const listing = lastSupported as SupportedResult | null;
      if (listing && !listing.ok && listing.problem === 'none')
        return { ok: false, inDoubt: false, unavailable: true, reason: `facilitator ${listing.detail}` };
      // /settle verifies again before submitting (docs/decisions.md "Skipping /verify").
      if (verifyAlways || !req.signatureRecovered) {
        let answer: JsonAnswer;
        try {
          answer = await post('/verify', req, verifyTimeoutMs);
        } catch (err) {
          // /verify moves no money: a failed verify charged nobody, and another facilitator may try.
          return { ok: false, inDoubt: false, unavailable: true, reason: `facilitator: ${(err as Error).message}` };
        }
        const v = classifyVerify(answer);
        if (v.kind === 'refused') {
          if (NAMES_KIND.test(v.reason)) kinds.invalidate();
          // A 5xx or a refusal naming the kind is the facilitator's trouble, not the payment's.
          const theirs = answer.status >= 500 || NAMES_KIND.test(v.reason);
          return { ok: false, inDoubt: false, reason: v.reason, ...(theirs ? { unavailable: true } : {}) };
        }
      }
      let answer: JsonAnswer;
      try {
        answer = await post('/settle', req, settleTimeoutMs);
      } catch (err) {
        // No connection was ever made: nothing can have been submitted, truly not charged.
        if (neverConnected(err))
          return {
            ok: false,
            inDoubt: false,
            unavailable: true,
            reason: `facilitator unreachable: ${(err as Error).message}`,
          };
        // The request reached /settle and no answer came: in doubt until the token contract says.
        return decide(req, `facilitator /settle gave no clear answer (${(err as Error).message})`, null);
      }
      const c = classifySettle(answer, req.authorization.nonce);
      if (c.kind === 'settled') return settled(req, c.txHash);
      if (c.kind === 'refused') return refused(req, c.reason);
      return decide(req, c.reason, c.txHash);
    },
    status,
    supported: () => kinds.refresh(),
    close: client.close,
  };
}

/** Errors raised before a connection existed: the request cannot have been delivered. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', NOT_SENT]);
function neverConnected(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && NOT_CONNECTED.has(code);
}
