import type { Address, Hex } from 'viem';
import type { Db } from '../db/open.ts';
import { MOCK_PAY_TO, payTo, type Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { bundlePrice } from '../pricing/tiers.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { createSecretKey } from 'node:crypto';
import { MAX_AUTH_LIFETIME_S, bindingNonce, isIssuedSalt, matchBinding } from './binding.ts';
import { paymentRequired, standardAccept, type ChallengeInput } from './envelope.ts';
import { USDC_NAME, USDC_VERSION } from './eip3009.ts';
import {
  PAYMENT_ERRORS,
  bindingMismatch,
  sanctioned,
  screeningUnavailable,
  settleFailed,
  settlementPending,
  verifyFailed,
} from './errors.ts';
import type { PaymentRequiredBody } from './schemas.ts';
import type { PaymentRequirementsV1, SettleOutcome, Settler } from './settlers/settler.ts';
import { createLedger } from './ledger.ts';
import { createPaymentStore, validBeforeOf, type PaymentRow } from './store.ts';
import { checkPayee, checkWindow, verifyPayment, type TypedDataVerifier } from './verify.ts';
import { decodeXPayment, type DecodedPayment } from './x-payment.ts';

/**
 * The purchase flow (spec 4.3 and issue 12). Cheap checks first (decode, payee, amount, salt tag),
 * then one lookup: a known (payer, nonce) answers its state whatever the clock says. A new one is
 * verified (window, binding, signature), screened, claimed and settled. A settlement whose outcome
 * is unknown is `in_doubt` (503, retry the same header) and only the token contract resolves it.
 * A receipt token is issued once: to the request whose own settle call moved the money.
 */
export type PaymentPlaneDeps = {
  db: Db;
  secret: Buffer;
  settler: Settler;
  sanctions: SanctionsList;
  ofacRequired: boolean;
  clock: Clock;
  logger: Logger;
  payTo: Address;
  usdc: Address;
  baseUrl: string;
  termsUrl: string;
  mode: 'mock' | 'live';
  chainVerifier?: TypedDataVerifier;
  /** Purchase attempts by outcome and settled micro-USDC go here for /metrics. */
  metrics?: Metrics;
  /** Retry-After of the in-doubt answer (the reconciler's interval is a good value). */
  retryAfterSeconds?: number;
  /** Per-wallet abuse limit, called once the signature names the payer; throws a 429 ApiError. */
  limitPayer?: (payer: string) => void;
};

/** The `outcome` label of isocast_payments_total for each way a purchase can end. */
const OUTCOME_BY_ERROR: Record<string, string> = {
  [PAYMENT_ERRORS.verify]: 'verification_failed',
  [PAYMENT_ERRORS.binding]: 'binding_mismatch',
  [PAYMENT_ERRORS.settle]: 'settlement_failed',
  [PAYMENT_ERRORS.pending]: 'in_doubt',
  [PAYMENT_ERRORS.sanctioned]: 'sanctioned',
  [PAYMENT_ERRORS.screening]: 'screening_unavailable',
  [PAYMENT_ERRORS.entitlement]: 'entitlement_failed',
};

export function paymentOutcome(result: unknown): string {
  if (result instanceof ApiError) return OUTCOME_BY_ERROR[result.message] ?? 'rejected';
  if (result instanceof Error) return 'error';
  return (result as { idempotent: boolean }).idempotent ? 'idempotent' : 'settled';
}

export type Purchase = {
  payer: string;
  city: string;
  count: number;
  paymentId: number;
  txHash: string | null;
  idempotent: boolean;
  paidThroughSeq: number;
  totalPaidSignals: number;
  latestSeq: number;
  receiptToken: string | null;
};

export type PurchaseOptions = {
  /** Runs for a payment about to be settled, before its claim: throw to refuse with nothing moved. */
  beforeSettle?: (payer: string) => void;
};

/** A buyer's header being settled. `recovered`: its signature recovered locally to `from` just now. */
type Retry = { p: DecodedPayment; city: string; count: number; resourcePath: string; recovered?: boolean };

export type PaymentPlane = ReturnType<typeof createPaymentPlane>;

export function createPaymentPlane(deps: PaymentPlaneDeps) {
  const { db, settler, logger, clock } = deps;
  const store = createPaymentStore(db);
  // The HMAC key as a KeyObject, made once: salts and tags are computed on every paid request.
  const secret = createSecretKey(deps.secret);
  // Work on one (payer, nonce) running in this process: a settle, or the resolution of a doubt.
  // Another request for the same key waits for it and answers the resulting state.
  const inflight = new Map<string, Promise<Purchase>>();
  const outcomes = deps.metrics?.counter(
    'isocast_payments_total',
    'Purchase attempts with an X-Payment header, by outcome',
  );
  const settledMicro = deps.metrics?.counter(
    'isocast_payments_settled_micro_usdc_total',
    'Micro-USDC of payments newly settled and applied, by city',
  );
  const retryAfter = deps.retryAfterSeconds ?? 10;
  const pending = () => settlementPending(retryAfter);
  const nowS = () => Math.floor(clock.now() / 1000);
  let accepting = true;

  const challenge = (
    city: string,
    count: number,
    resourcePath: string,
    opts: Pick<ChallengeInput, 'error' | 'exhaustion'> = {},
  ): PaymentRequiredBody =>
    paymentRequired({
      city,
      count,
      resource: `${deps.baseUrl}${resourcePath}`,
      payTo: deps.payTo,
      usdc: deps.usdc,
      secret,
      nowSeconds: nowS(),
      termsUrl: deps.termsUrl,
      mode: deps.mode,
      ...opts,
    });

  /**
   * Standard x402 v1 requirements: our binding and `mode` stay out of what a facilitator is sent.
   * Built once per (city, count, resource, network), with no salt: the challenge's fresh salt and
   * window salt would be two HMACs and random bytes per settle only to be stripped again.
   */
  const requirementsCache = new Map<string, PaymentRequirementsV1>();
  function requirements(city: string, count: number, resourcePath: string, network: string): PaymentRequirementsV1 {
    const cacheKey = `${network}|${count}|${city}|${resourcePath}`;
    let r = requirementsCache.get(cacheKey);
    if (!r) {
      const accept = standardAccept(
        { city, count, resource: `${deps.baseUrl}${resourcePath}`, payTo: deps.payTo, usdc: deps.usdc },
        network,
      );
      r = { ...accept, extra: { name: USDC_NAME, version: USDC_VERSION } };
      // Bounded: cities x counts x the two resource shapes; a flood of odd `since` values is not kept.
      if (requirementsCache.size < 4096) requirementsCache.set(cacheKey, r);
    }
    return r;
  }

  const { apply, answer, recordAndApply } = createLedger({ db, store, clock, logger, pending });

  /** One settle call for a claimed row. `fresh`: nothing of this authorization was public before. */
  async function settleClaimed(id: number, r: Retry, payer: Address, fresh: boolean): Promise<Purchase> {
    let outcome: SettleOutcome;
    try {
      outcome = await settler.settle({
        payer,
        authorization: r.p.authorization,
        signature: r.p.signature,
        payload: r.p.payload,
        requirements: requirements(r.city, r.count, r.resourcePath, r.p.payload.network),
        signatureRecovered: r.recovered === true,
        fresh,
      });
    } catch (err) {
      logger.error('settler threw', {
        paymentId: id,
        payer,
        nonce: r.p.authorization.nonce,
        settler: settler.kind,
        err,
      });
      outcome = { ok: false, inDoubt: true, reason: `settler error: ${(err as Error).message}` };
    }
    if (outcome.ok) return recordAndApply(id, outcome.txHash, fresh && !outcome.alreadySettled);
    const fields = {
      paymentId: id,
      payer,
      nonce: r.p.authorization.nonce,
      city: r.city,
      count: r.count,
      settler: settler.kind,
      txHash: outcome.txHash ?? null,
      reason: outcome.reason,
    };
    if (outcome.inDoubt) {
      store.markInDoubt(id, outcome.reason, clock.now());
      logger.error('settlement in doubt; the token contract will decide', fields);
      throw pending();
    }
    store.markFailed(id, outcome.reason, clock.now());
    logger.warn('settlement failed; not charged', fields);
    throw settleFailed(outcome.reason);
  }

  /**
   * The token contract's word on an in-doubt (or cut-off claimed) payment: used -> applied once;
   * unused past validBefore -> failed, truly not charged; unused and still valid -> settled
   * again with the same authorization when the buyer resent it; otherwise still in doubt.
   */
  async function resolve(row: PaymentRow, retry: Retry | null): Promise<Purchase> {
    const nowMs = clock.now();
    if (row.status === 'claimed') store.markInDoubt(row.id, 'settle attempt cut off', nowMs);
    const st = await settler.status(row.payer as Address, row.nonce as Hex, validBeforeOf(row, MAX_AUTH_LIFETIME_S));
    const fields = { paymentId: row.id, payer: row.payer, nonce: row.nonce, settler: row.settler };
    if (st.state === 'used') {
      logger.info('in-doubt payment resolved: authorization used on chain', { ...fields, txHash: st.txHash });
      return recordAndApply(row.id, st.txHash, false);
    }
    if (st.state === 'unused' && st.expired) {
      store.markFailed(row.id, 'authorization expired unused on chain; not charged', clock.now());
      logger.info('in-doubt payment resolved: expired unused on chain, not charged', fields);
      throw settleFailed('authorization expired unused on chain');
    }
    if (st.state === 'unknown') logger.warn('in-doubt payment still unresolved', { ...fields, reason: st.reason });
    if (st.state !== 'unused' || !retry) throw pending();
    // Unused and still valid: the buyer's resent header may be settled again, once it verifies.
    const v = await verifyPayment(retry.p, terms(retry.count));
    if (!v.ok || v.payer !== row.payer) throw pending();
    if (!store.reclaim(row.id, settler.kind, clock.now())) return answer(store.get(row.id)!);
    return settleClaimed(row.id, { ...retry, recovered: v.recovered }, v.payer, false);
  }

  const terms = (count: number) => ({
    usdc: deps.usdc,
    payTo: deps.payTo,
    priceMicro: bundlePrice(count).totalMicro,
    nowSeconds: nowS(),
    chainVerifier: deps.chainVerifier,
  });

  /** Runs `work` as the one piece of work on this key; null when another is already running. */
  function exclusive(key: string, work: () => Promise<Purchase>): Promise<Purchase> | null {
    if (inflight.has(key)) return null;
    const running = work();
    inflight.set(key, running);
    const done = () => {
      inflight.delete(key);
    };
    running.then(done, done);
    return running;
  }

  async function afterRunning(key: string, payer: string, nonce: string): Promise<Purchase> {
    await inflight.get(key)!.catch(() => undefined);
    const row = store.byKey(payer, nonce);
    if (!row) throw pending();
    return answer(row);
  }

  async function purchaseOnce(
    header: string,
    city: string,
    count: number,
    resourcePath: string,
    opts: PurchaseOptions,
  ): Promise<Purchase> {
    if (!accepting)
      throw new ApiError(
        503,
        'server shutting down; send the same request again shortly',
        { retryAfterSeconds: 5 },
        { 'retry-after': '5' },
      );
    const decoded = decodeXPayment(header);
    if (!decoded.ok) throw verifyFailed(decoded.reason);
    const p = decoded.value;
    const a = p.authorization;
    const payee = checkPayee(a, { payTo: deps.payTo, priceMicro: bundlePrice(count).totalMicro });
    if (payee && !payee.ok) throw verifyFailed(payee.reason);
    if (p.salt && !isIssuedSalt(secret, city, count, p.salt)) throw bindingMismatch();
    const from = a.from.toLowerCase();
    const key = `${from}:${a.nonce}`;
    if (inflight.has(key)) return afterRunning(key, from, a.nonce);

    // A known payment answers its state whatever the clock says: one lookup, no recovery.
    const known = store.byKey(from, a.nonce);
    const retry: Retry = { p, city, count, resourcePath };
    if (known) {
      if (known.city !== city || known.count !== count) throw bindingMismatch();
      if (deps.sanctions.has(from)) throw sanctioned();
      if (known.status === 'claimed' || known.status === 'in_doubt')
        return exclusive(key, () => resolve(known, retry)) ?? afterRunning(key, from, a.nonce);
      // Everything else is final, `failed` included: a buyer told "not charged" may pay again with
      // a new authorization, so this one is never settled later (that would charge twice).
      return answer(known);
    }

    const window = checkWindow(a, nowS());
    if (window && !window.ok) throw verifyFailed(window.reason);
    const verified = await verifyPayment(p, terms(count));
    if (!verified.ok) throw verifyFailed(verified.reason);
    const payer = verified.payer;
    // Per-wallet abuse limit: only now does a signature name the wallet (a 429 settles nothing).
    deps.limitPayer?.(payer);
    if (deps.sanctions.has(payer)) {
      logger.warn('sanctioned payer refused', { payer, city, count });
      throw sanctioned();
    }
    if (!deps.sanctions.available(deps.ofacRequired)) throw screeningUnavailable();
    // Spec order: verify, sanctions, binding. An echoed salt (its tag already checked) binds
    // exactly; without one, the nonce must come from an accepted window's salt.
    const bound = p.salt
      ? bindingNonce(payer, city, count, p.salt) === a.nonce
      : matchBinding(secret, {
          payer,
          city,
          count,
          nonce: a.nonce,
          nowSeconds: nowS(),
          validBefore: Number(a.validBefore),
        }) !== null;
    if (!bound) throw bindingMismatch();
    opts.beforeSettle?.(payer);
    retry.recovered = verified.recovered;
    return exclusive(key, () => claimAndSettle(retry, payer)) ?? afterRunning(key, from, a.nonce);
  }

  async function claimAndSettle(r: Retry, payer: Address): Promise<Purchase> {
    const a = r.p.authorization;
    const claim = store.claim({
      payer,
      nonce: a.nonce,
      city: r.city,
      count: r.count,
      amountMicro: bundlePrice(r.count).totalMicro,
      settler: settler.kind,
      nowMs: clock.now(),
      validBefore: Number(a.validBefore),
    });
    if (claim.claimed) return settleClaimed(claim.id, r, payer, true);
    const row = claim.row;
    if (row.status === 'claimed' || row.status === 'in_doubt') return resolve(row, r);
    return answer(row);
  }

  return {
    challenge,
    store,
    apply,
    recordAndApply,

    /** The whole paid flow for one X-Payment header and an already validated (city, count). */
    async purchase(
      header: string,
      city: string,
      count: number,
      resourcePath: string,
      opts: PurchaseOptions = {},
    ): Promise<Purchase> {
      try {
        const p = await purchaseOnce(header, city, count, resourcePath, opts);
        outcomes?.inc({ outcome: paymentOutcome(p) });
        if (!p.idempotent) settledMicro?.inc({ city: p.city }, bundlePrice(p.count).totalMicro);
        return p;
      } catch (err) {
        outcomes?.inc({ outcome: paymentOutcome(err) });
        throw err;
      }
    },

    /**
     * The reconciler's step for one open row (no buyer header): apply a settled row, or ask the
     * chain about an in-doubt one. Rows with work running in this process are left to it.
     */
    async reconcile(row: PaymentRow): Promise<'applied' | 'refunded' | 'failed' | 'pending' | 'busy'> {
      const key = `${row.payer}:${row.nonce}`;
      const work = exclusive(key, async () => {
        // Re-read inside the exclusive section: the snapshot may predate a request's work.
        const cur = store.get(row.id)!;
        return cur.status === 'claimed' || cur.status === 'in_doubt' ? resolve(cur, null) : answer(cur);
      });
      if (!work) return 'busy';
      try {
        const p = await work;
        if (!p.idempotent) settledMicro?.inc({ city: p.city }, bundlePrice(p.count).totalMicro);
        return 'applied';
      } catch (err) {
        if (err instanceof ApiError && err.message === PAYMENT_ERRORS.entitlement) return 'refunded';
        if (err instanceof ApiError && err.message === PAYMENT_ERRORS.settle) return 'failed';
        if (err instanceof ApiError && err.message === PAYMENT_ERRORS.pending) return 'pending';
        throw err;
      }
    },

    /** Shutdown: no new purchase starts (nothing is verified, claimed or settled). */
    stopAccepting: () => {
      accepting = false;
    },
    /** Settle calls running now (the shutdown waits for them). */
    inflightCount: () => inflight.size,
    /** Settles still running when the process must exit become in doubt, for the next start. */
    strandInflight(reason: string): number {
      let n = 0;
      for (const key of inflight.keys()) {
        const [payer, nonce] = key.split(':') as [string, string];
        const row = store.byKey(payer, nonce);
        if (row && store.markInDoubt(row.id, reason, clock.now())) {
          n++;
          logger.error('settlement cut off by shutdown; in doubt', {
            paymentId: row.id,
            payer,
            nonce,
            settler: row.settler,
          });
        }
      }
      return n;
    },
    /** Resolves once no settle call is running (or never, if one hangs: the caller bounds it). */
    async drain(): Promise<void> {
      while (inflight.size > 0) await Promise.allSettled([...inflight.values()]);
    },
  };
}

/** The plane as configured: effective settlement wallet, USDC address, public addresses. */
export function paymentPlaneFor(d: {
  config: Config;
  db: Db;
  secret: Buffer;
  settler: Settler;
  sanctions: SanctionsList;
  clock: Clock;
  logger: Logger;
  chainVerifier?: TypedDataVerifier;
  metrics?: Metrics;
  limitPayer?: (payer: string) => void;
}): PaymentPlane {
  return createPaymentPlane({
    db: d.db,
    secret: d.secret,
    settler: d.settler,
    sanctions: d.sanctions,
    ofacRequired: d.config.OFAC_REQUIRED,
    clock: d.clock,
    logger: d.logger,
    payTo: (payTo(d.config) ?? MOCK_PAY_TO) as Address,
    usdc: d.config.USDC_ADDRESS as Address,
    baseUrl: d.config.BASE_URL,
    termsUrl: d.config.TERMS_URL,
    mode: d.config.PAYMENT_MODE,
    chainVerifier: d.chainVerifier,
    metrics: d.metrics,
    limitPayer: d.limitPayer,
    retryAfterSeconds: Math.max(1, Math.ceil((d.config.RECONCILE_INTERVAL_MS ?? 30_000) / 1000)),
  });
}
