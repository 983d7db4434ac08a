import type { Address, Hex } from 'viem';
import { NOT_SENT, createJsonPost, type JsonAnswer, type PerRequestHeaders } from '../../lib/http-exchange.ts';
import { classifySettle, classifyVerify } from './facilitator-answer.ts';
import { NAMES_KIND, createKindCache, type SupportedResult } from './negotiate.ts';
import type { TransactionProof } from './chain-proof.ts';
import {
  termsOf,
  type AuthorizationStatus,
  type PaymentTerms,
  type SettleOutcome,
  type SettleRequest,
  type Settler,
} from './settler.ts';
import { facilitatorBody } from '../../x402/v2.ts';

/**
 * An x402 facilitator (CDP, PayAI, the self-hosted reference ones): `POST /settle` (after
 * `POST /verify` unless our own recovery already proved the signature, below) in the
 * (x402Version, scheme, network) its `GET /supported` lists (negotiate.ts, wire.ts). What each
 * answer means for money is facilitator-answer.ts: a refusal is answered "not charged" at once;
 * only an unclear answer waits for the chain. Payment payloads go only to the facilitator, never
 * to a log. Calls go over one keep-alive connection pool (lib/http-client.ts).
 */
type FacilitatorOptions = {
  url: string;
  /** Sent verbatim as the Authorization header when set (FACILITATOR_AUTH). */
  auth?: string;
  /** Headers made for each request instead (CDP's per-request JWT, cdp-auth.ts). */
  perRequest?: PerRequestHeaders;
  verifyTimeoutMs?: number;
  settleTimeoutMs?: number;
  supportedTimeoutMs?: number;
  /**
   * The token's own answer about (payer, nonce) over RPC_URL (live mode always has one). Without
   * it a `/settle` that went quiet stays in doubt: nothing else can say whether money moved.
   */
  status?: (payer: Address, nonce: Hex, terms: PaymentTerms) => Promise<AuthorizationStatus>;
  /**
   * The transaction a successful `/settle` names, read from our own RPC_URL and judged by
   * settlement-proof.ts: a facilitator's "success" is not proof that PAY_TO was paid.
   * Live mode always has it (from-config.ts); without it the facilitator's word is taken.
   */
  confirm?: (txHash: Hex, expect: { payer: Address; nonce: Hex; terms: PaymentTerms }) => Promise<TransactionProof>;
  /**
   * authorizationState(payer, nonce) alone, one RPC call (throws when the RPC does not answer):
   * what a refusal costs. Without it a refusal asks `status`.
   */
  used?: (payer: Address, nonce: Hex) => Promise<boolean>;
  /**
   * `unless-recovered` (the default): no `/verify` when the signature recovered locally to
   * `authorization.from` (`SettleRequest.signatureRecovered`); the facilitator's `/settle` runs
   * the same verification and refuses before any transfer (docs/decisions.md, "Skipping /verify").
   * `always`: `/verify` first for every payment.
   */
  verify?: 'always' | 'unless-recovered';
  now?: () => number;
  /** Each `/supported` reading (for the log). */
  onSupported?: (r: SupportedResult) => void;
};

export const VERIFY_TIMEOUT_MS = 10_000;
export const SETTLE_TIMEOUT_MS = 30_000;
const SUPPORTED_TIMEOUT_MS = 5_000;

export function createFacilitatorSettler(opts: FacilitatorOptions): Settler {
  const headers: Record<string, string> = opts.auth ? { authorization: opts.auth } : {};
  const verifyTimeoutMs = opts.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS;
  const settleTimeoutMs = opts.settleTimeoutMs ?? SETTLE_TIMEOUT_MS;
  const supportedTimeoutMs = opts.supportedTimeoutMs ?? SUPPORTED_TIMEOUT_MS;
  const status = async (payer: Address, nonce: Hex, terms: PaymentTerms): Promise<AuthorizationStatus> =>
    opts.status
      ? opts.status(payer, nonce, terms)
      : { state: 'unknown', reason: 'no RPC_URL to ask the token contract' };

  const client = createJsonPost('facilitator', { baseUrl: opts.url, headers, perRequest: opts.perRequest });
  // The last /supported reading: one that lists none of our kinds takes no payment (failover).
  let lastSupported: SupportedResult | null = null;
  const kinds = createKindCache({
    fetch: () => client.get('/supported', supportedTimeoutMs),
    now: opts.now ?? Date.now,
    onResult: (r) => {
      lastSupported = r;
      opts.onSupported?.(r);
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
   * The facilitator refused and named no transaction: by its word nothing was submitted. One
   * read of authorizationState covers the one way money can still have moved: the authorization
   * was used before it reached us (the buyer, or anyone holding the header, submitted it). A used
   * nonce is not a payment (an "already used" refusal is exactly what a cancelled nonce earns):
   * only the transaction that used it paying PAY_TO the price is credited, without a receipt
   * token (the transfer was not ours).
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
    // Used (rare): only now is the transaction looked up and judged.
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
    maxSettleMs: supportedTimeoutMs + verifyTimeoutMs + settleTimeoutMs + 15_000,
    async settle(req) {
      // A retry of a payment whose earlier /settle went quiet: the chain knows if it landed. A
      // fresh claim had nothing sent before, and asking would cost two RPC calls per purchase; an
      // authorization someone else already used is refused by /settle and found by refused().
      if (!req.fresh) {
        const earlier = await status(req.payer, req.authorization.nonce, termsOf(req));
        if (earlier.state === 'used') return { ok: true, txHash: earlier.txHash, alreadySettled: true };
        if (earlier.state === 'spent') return { ok: false, inDoubt: false, reason: earlier.reason };
        if (earlier.state === 'unused' && earlier.expired)
          return { ok: false, inDoubt: false, reason: 'authorization expired before it could be settled' };
      }
      // Its /supported lists none of our kinds: nothing is sent (the next facilitator may take it).
      await kinds.current();
      const listing = lastSupported as SupportedResult | null;
      if (listing && !listing.ok && listing.problem === 'none')
        return { ok: false, inDoubt: false, unavailable: true, reason: `facilitator ${listing.detail}` };
      // /settle verifies again before submitting anything; /verify only adds a round trip when our
      // own recovery already proved the signature (docs/decisions.md).
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
        // No connection was ever made (refused, or the name did not resolve): not one byte of the
        // request left, so nothing can have been submitted. A definite failure, truly not charged.
        if (neverConnected(err))
          return {
            ok: false,
            inDoubt: false,
            unavailable: true,
            reason: `facilitator unreachable: ${(err as Error).message}`,
          };
        // The request reached /settle and no answer came back: the transfer may have been
        // submitted. In doubt until the token contract says otherwise.
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
