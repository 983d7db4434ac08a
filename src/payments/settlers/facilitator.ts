import type { Address, Hex } from 'viem';
import { NOT_SENT, createJsonPost, type JsonAnswer, type PerRequestHeaders } from '../../lib/http-client.ts';
import { NAMES_KIND, classifySettle, createKindCache, verifyRefusal } from './negotiate.ts';
import type { createProofReader } from './chain-proof.ts';
import { settledBefore, termsOf, type SettleOutcome, type SettleRequest, type Settler } from './settler.ts';
import { facilitatorBody } from '../../x402/v2.ts';

/** An x402 facilitator: a refusal is "not charged" at once, an unclear answer waits for the chain; logs no payload. */
type FacilitatorOptions = {
  url: string;
  /** Sent verbatim as the Authorization header when set (FACILITATOR_AUTH). */
  auth?: string;
  /** Headers made for each request instead (CDP's per-request JWT). */
  perRequest?: PerRequestHeaders;
  verifyTimeoutMs?: number;
  settleTimeoutMs?: number;
  /** The token's word on (payer, nonce); without it a `/settle` that went quiet stays in doubt. */
  status?: Settler['status'];
  /** Judges a `/settle` success's transaction on our RPC: a facilitator's "success" is not proof PAY_TO was paid. */
  confirm?: ReturnType<typeof createProofReader>['confirm'];
  /** authorizationState alone, one RPC call: what a refusal costs. Without it a refusal asks `status`. */
  used?: (payer: Address, nonce: Hex) => Promise<boolean>;
  /** Default `unless-recovered`: no `/verify` after our recovery, as `/settle` checks again (docs/decisions.md). */
  verify?: 'always' | 'unless-recovered';
};

const VERIFY_TIMEOUT_MS = 10_000;
const SETTLE_TIMEOUT_MS = 30_000;
const SUPPORTED_TIMEOUT_MS = 5_000;

export function createFacilitatorSettler(opts: FacilitatorOptions): Settler {
  const headers: Record<string, string> = opts.auth ? { authorization: opts.auth } : {};
  const verifyTimeoutMs = opts.verifyTimeoutMs ?? VERIFY_TIMEOUT_MS;
  const settleTimeoutMs = opts.settleTimeoutMs ?? SETTLE_TIMEOUT_MS;
  const status: Settler['status'] = async (payer, nonce, terms) =>
    opts.status
      ? opts.status(payer, nonce, terms)
      : { state: 'unknown', reason: 'no RPC_URL to ask the token contract' };

  const client = createJsonPost('facilitator', { baseUrl: opts.url, headers, perRequest: opts.perRequest });
  const kinds = createKindCache({ fetch: () => client.get('/supported', SUPPORTED_TIMEOUT_MS), now: Date.now });
  const verifyAlways = opts.verify === 'always';

  /**
   * An open outcome, for the token contract: after a `refusal` naming no transaction an unused authorization is not
   * charged; a used nonce (a cancelled one too) is credited only for a transaction paying PAY_TO the price.
   */
  async function decide(req: SettleRequest, reason: string, after: Hex | null | 'refusal'): Promise<SettleOutcome> {
    const st = await status(req.payer, req.authorization.nonce, termsOf(req));
    const refusal = after === 'refusal';
    if (st.state === 'used') return { ok: true, txHash: st.txHash, ...(refusal ? { alreadySettled: true } : {}) };
    if (st.state === 'spent') return { ok: false, inDoubt: false, reason: `${reason}; ${st.reason}` };
    if (st.state === 'unused' && refusal) return { ok: false, inDoubt: false, reason };
    const submitted = refusal ? null : after;
    return {
      ok: false,
      inDoubt: true,
      reason: st.state === 'unknown' ? `${reason}; ${st.reason}` : reason,
      ...(submitted ? { txHash: submitted } : {}),
    };
  }

  async function refused(req: SettleRequest, reason: string): Promise<SettleOutcome> {
    if (NAMES_KIND.test(reason)) kinds.invalidate();
    if (!opts.used && !opts.status) return { ok: false, inDoubt: false, reason };
    try {
      if (opts.used && !(await opts.used(req.payer, req.authorization.nonce)))
        return { ok: false, inDoubt: false, reason };
    } catch (err) {
      // The chain did not answer: a prior use cannot be ruled out, so "not charged" is not known.
      return { ok: false, inDoubt: true, reason: `${reason}; rpc: ${(err as Error).message}` };
    }
    return decide(req, reason, 'refusal');
  }

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
      // Only a retry asks the chain first (two RPC calls a purchase); /settle refuses a used one, refused() finds it.
      if (!req.fresh) {
        const earlier = settledBefore(await status(req.payer, req.authorization.nonce, termsOf(req)));
        if (earlier) return earlier;
      }
      const kind = await kinds.current();
      // Its /supported lists none of our kinds: nothing is sent (the next facilitator may take it).
      if ('problem' in kind)
        return { ok: false, inDoubt: false, unavailable: true, reason: `facilitator ${kind.detail}` };
      const body = facilitatorBody(kind, req);
      // /settle verifies again before submitting (docs/decisions.md "Skipping /verify").
      if (verifyAlways || !req.signatureRecovered) {
        let answer: JsonAnswer;
        try {
          answer = await client.postJson('/verify', body, verifyTimeoutMs);
        } catch (err) {
          // /verify moves no money: a failed verify charged nobody, and another facilitator may try.
          return { ok: false, inDoubt: false, unavailable: true, reason: `facilitator: ${(err as Error).message}` };
        }
        const refusal = verifyRefusal(answer);
        if (refusal !== null) {
          const namesKind = NAMES_KIND.test(refusal);
          if (namesKind) kinds.invalidate();
          // A 5xx or a refusal naming the kind is the facilitator's trouble, not the payment's.
          const theirs = answer.status >= 500 || namesKind;
          return { ok: false, inDoubt: false, reason: refusal, ...(theirs ? { unavailable: true } : {}) };
        }
      }
      let answer: JsonAnswer;
      try {
        answer = await client.postJson('/settle', body, settleTimeoutMs);
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

const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', NOT_SENT]);
function neverConnected(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && NOT_CONNECTED.has(code);
}
