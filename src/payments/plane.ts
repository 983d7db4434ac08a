import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Address } from 'viem';
import { createGroupCommit } from '../db/group-commit.ts';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { boundToBundle, createSaltSteps, decideBinding } from './binding.ts';
import { createChallenges, type BundleOffer } from './challenge.ts';
import { createLedger, type LedgerStores, type ResultMemo } from './ledger.ts';
import { paymentCounters, refused, type PurchaseOutcome } from './outcomes.ts';
import { MOCK_PAY_TO, payTo } from './pay-to.ts';
import { createSettle, type Retry } from './settle.ts';
import type { Settler } from './settlers/settler.ts';
import { createPaymentStore, rowFields, type PaymentRow } from './store.ts';
import { checkPayee, checkWindow, verifySignature, type TypedDataVerifier } from './verify.ts';
import { identifierKey, signedPaymentDigest } from '../x402/payment-identifier.ts';
import { acceptedProblem, decodePaymentHeader, type PaymentHeader } from '../x402/v2.ts';

type PaymentSettings = Parameters<typeof payTo>[0] & {
  USDC_ADDRESS: string;
  OFAC_REQUIRED: boolean;
  /** `any` binds a v2 nonce at first sighting, `bound` keeps spec 5's binding; v1 is always bound. */
  V2_NONCE?: 'any' | 'bound';
  BASE_URL: string;
  TERMS_URL: string;
  RECONCILE_INTERVAL_MS: number;
};

type PaymentPlaneDeps = {
  db: Db;
  stores: LedgerStores;
  secret: Buffer;
  settler: Settler;
  sanctions: SanctionsList;
  clock: Clock;
  logger: Logger;
  /** Live mode with RPC_URL: verifies smart-wallet (ERC-1271/6492) signatures on chain. */
  chainVerifier?: TypedDataVerifier;
  /** Per-wallet abuse limit, once the signature names the payer; its 429 ApiError is refused `limited`. */
  limitPayer?: (payer: string) => void;
  config: PaymentSettings;
  metrics?: Metrics;
};

type PurchaseOptions = {
  /** The read's cursor: a payment whose new ceiling stays at or below it is refused `exhausted` before its claim. */
  readsAfter?: number;
  /** The route's stored answer for a payment identifier (ledger.ts), replayed for the same payment. */
  memo?: ResultMemo;
};

function settingsOf(given: PaymentPlaneDeps) {
  const { config } = given;
  return {
    ...given,
    payTo: (payTo(config) ?? MOCK_PAY_TO) as Address,
    usdc: config.USDC_ADDRESS as Address,
    baseUrl: config.BASE_URL,
    termsUrl: config.TERMS_URL,
    mode: config.PAYMENT_MODE,
    // The reconciler's interval: an in-doubt buyer retrying sooner would find nothing new.
    retryAfterSeconds: Math.max(1, Math.ceil((config.RECONCILE_INTERVAL_MS ?? 30_000) / 1000)),
  };
}

export type PurchaseSettings = ReturnType<typeof settingsOf>;

const paymentKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce}`;
export type PaymentPlane = ReturnType<typeof paymentPlaneFor>;

/** Challenge, purchase flow (spec 4.3), ledger, coalescing: every expected end is an outcome, never a throw. */
export function paymentPlaneFor(given: PaymentPlaneDeps) {
  const counters = paymentCounters(given.metrics);
  let accepting = true;
  const deps = settingsOf(given);
  const { settler, logger, clock, db } = deps;
  const store = createPaymentStore(db);
  const saltSteps = createSaltSteps(db);
  // Made on first use: the start's only node:crypto use, loaded lazily by the binary (scripts/sea/lazy-builtins.ts).
  let key: KeyObject | undefined;
  const secret = (): KeyObject => (key ??= createSecretKey(deps.secret));
  // At most one settle or doubt resolution per (payer, nonce) in this process: never sent to a settler twice at once.
  const running = new Map<string, Promise<PurchaseOutcome>>();
  function exclusive(key: string, work: () => Promise<PurchaseOutcome>): Promise<PurchaseOutcome> | null {
    if (running.has(key)) return null;
    const p = work();
    running.set(key, p);
    const done = () => {
      running.delete(key);
    };
    p.then(done, done);
    return p;
  }
  const challenges = createChallenges({ ...deps, secret, nowMs: () => clock.now(), currentStep: saltSteps.current });
  const commits = createGroupCommit(db, { onCommit: counters.committed });
  const ledger = createLedger({ ...deps, store, commits, secret });
  const inDoubt: PurchaseOutcome = { kind: 'in_doubt', retryAfterSeconds: deps.retryAfterSeconds };
  const { settleClaimed, resolve } = createSettle({ ...deps, store, ledger, challenges, inDoubt });

  /** Another request's work on this payment ended: answer the state it left, on the bundle it was first seen on. */
  async function afterRunning(r: Retry): Promise<PurchaseOutcome> {
    const { from, nonce } = r.p.authorization;
    await running.get(paymentKey(from, nonce))?.catch(() => undefined);
    const row = store.byKey(from.toLowerCase(), nonce);
    if (!row) return inDoubt;
    if (!boundToBundle(row, r.city, r.count)) return refused({ why: 'bound_elsewhere' });
    return answerKnown(row, r);
  }

  /** Its own identifier again on the same route gets the stored answer; anything else its state. */
  function answerKnown(row: PaymentRow, r: Retry): PurchaseOutcome {
    const stored = r.idKey && row.payment_identifier === r.idKey && r.memo && ledger.replay(row, r.memo);
    return stored ? { kind: 'known', purchase: stored } : ledger.answer(row);
  }

  async function claimAndSettle(r: Retry, payer: Address): Promise<PurchaseOutcome> {
    const a = r.p.authorization;
    // Committed (with the other claims of this turn) before the settle call starts.
    const claim = await commits.run(() =>
      store.claim({
        payer,
        nonce: a.nonce,
        city: r.city,
        count: r.count,
        amountMicro: bundlePrice(r.count).totalMicro,
        settler: settler.kind,
        nowMs: clock.now(),
        validBefore: Number(a.validBefore),
        bindingK: r.bindingK ?? null,
        identifier: r.idKey ?? null,
      }),
    );
    if (claim.claimed) return settleClaimed(r, { id: claim.id, payer, fresh: true });
    const row = claim.row;
    // Another payment took the identifier since the check in purchase(): nothing of this one moved.
    if (!row) return refused({ why: 'identifier_conflict' });
    // The same authorization claimed first for another bundle (a race of two v2 requests).
    if (!boundToBundle(row, r.city, r.count)) return refused({ why: 'bound_elsewhere' });
    if (row.status === 'claimed' || row.status === 'in_doubt') return resolve(row, r);
    return answerKnown(row, r);
  }

  /** The whole paid flow for one payment header and an already validated (city, count). */
  async function purchase(header: PaymentHeader, offer: BundleOffer, opts: PurchaseOptions): Promise<PurchaseOutcome> {
    const { city, count } = offer;
    if (!accepting) return refused({ why: 'shutting_down' });
    // Two headers arrive joined by ", " (never in base64): refused whole, so no proxy reads one as we settle the other.
    if (header.value.includes(',')) return refused({ why: 'two_headers' });
    const decoded = decodePaymentHeader(header);
    if (!decoded.ok) return refused({ why: 'verification_failed', reason: decoded.reason });
    const p = decoded.value;
    const a = p.authorization;
    const priceMicro = bundlePrice(count).totalMicro;
    const payee = checkPayee(a, { payTo: deps.payTo, priceMicro });
    if (payee) return refused({ why: 'verification_failed', reason: payee });
    const accepted = p.accepted && acceptedProblem(p.accepted, { priceMicro, asset: deps.usdc, payTo: deps.payTo });
    if (accepted) return refused({ why: 'verification_failed', reason: accepted });
    const from = a.from.toLowerCase();
    const key = paymentKey(from, a.nonce);
    const idKey = p.identifier ? identifierKey(secret(), p.identifier) : undefined;
    const memo = idKey && opts.memo ? { ...opts.memo, payment: signedPaymentDigest(p) } : opts.memo;
    const retry: Retry = { p, city, count, resourcePath: offer.resourcePath, memo, idKey };
    // An identifier is one payment's: any other authorization is refused unverified; the unique index decides a race.
    if (idKey) {
      const holder = store.byIdentifier(idKey);
      if (holder && (holder.payer.toLowerCase() !== from || holder.nonce !== a.nonce))
        return refused({ why: 'identifier_conflict' });
    }
    if (running.has(key)) return afterRunning(retry);

    // A known payment answers its state whatever the clock says: one lookup, no recovery.
    const known = store.byKey(from, a.nonce);
    if (known) {
      if (!boundToBundle(known, city, count)) return refused({ why: 'bound_elsewhere' });
      if (deps.sanctions.has(from)) return refused({ why: 'sanctioned' });
      if (known.status === 'claimed' || known.status === 'in_doubt')
        return exclusive(key, () => resolve(known, retry)) ?? afterRunning(retry);
      // Everything else is final, `failed` too: a buyer told "not charged" may pay anew; settling later charges twice.
      return answerKnown(known, retry);
    }

    const window = checkWindow(a, Math.floor(clock.now() / 1000));
    if (window) return refused({ why: 'verification_failed', reason: window });
    // An unserved echoed salt is refused before recovery; V2_NONCE=any binds at first sight (`exact` allows any nonce).
    const anyNonce = header.version === 2 && deps.config.V2_NONCE !== 'bound';
    const steps = saltSteps.recent(city, count);
    const check = { city, count, steps, nowMs: clock.now(), validBefore: Number(a.validBefore) };
    // Searching every served salt is not worth it when any nonce pays.
    const binding = decideBinding(secret(), check, anyNonce && !p.salt ? null : p.salt);
    if (binding.echoRefused && !anyNonce) return refused({ why: 'binding_mismatch' });
    const verified = await verifySignature(p, { usdc: deps.usdc, chainVerifier: deps.chainVerifier });
    if (!verified.ok) return refused({ why: 'verification_failed', reason: verified.reason });
    const payer = verified.payer;
    // Only now does a signature name the wallet (a 429 settles nothing).
    try {
      deps.limitPayer?.(payer);
    } catch (err) {
      if (err instanceof ApiError) return refused({ why: 'limited', error: err });
      throw err;
    }
    if (deps.sanctions.has(payer)) {
      logger.warn('sanctioned payer refused', { payer, city, count });
      return refused({ why: 'sanctioned' });
    }
    if (!deps.sanctions.available({ required: deps.config.OFAC_REQUIRED }))
      return refused({ why: 'screening_unavailable' });
    const bound = anyNonce && (!p.salt || binding.echoRefused) ? null : binding.bound(payer, a.nonce);
    if (!bound && !anyNonce) return refused({ why: 'binding_mismatch' });
    const standing =
      opts.readsAfter === undefined ? null : ledger.leavesNothing(payer, { city, count, since: opts.readsAfter });
    if (standing) return refused({ why: 'exhausted', ...standing });
    retry.recovered = verified.recovered;
    // First-sight binding is the claim itself: the unique (payer, nonce) row carries the bundle.
    retry.bindingK = bound?.k;
    return exclusive(key, () => claimAndSettle(retry, payer)) ?? afterRunning(retry);
  }

  return {
    challenge: challenges.challenge,
    store,

    async purchase(header: PaymentHeader, offer: BundleOffer, opts: PurchaseOptions = {}): Promise<PurchaseOutcome> {
      try {
        const o = await purchase(header, offer, opts);
        counters.attempt(o);
        counters.applied(o);
        return o;
      } catch (err) {
        counters.attempt('error');
        throw err;
      }
    },

    /** The reconciler's step for one open row; rows with work running in this process are left to it. */
    async reconcile(row: PaymentRow): Promise<'applied' | 'refunded' | 'failed' | 'pending' | 'busy'> {
      const work = exclusive(paymentKey(row.payer, row.nonce), async () => {
        // Re-read inside the exclusive section: the snapshot may predate a request's work.
        const cur = store.get(row.id)!;
        return cur.status === 'claimed' || cur.status === 'in_doubt' ? resolve(cur, null) : ledger.answer(cur);
      });
      if (!work) return 'busy';
      const o = await work;
      counters.applied(o);
      if (o.kind === 'applied' || o.kind === 'known') return 'applied';
      if (o.kind === 'in_doubt') return 'pending';
      return o.kind === 'refunded' ? 'refunded' : 'failed';
    },

    /** Shutdown: no new purchase starts (nothing is verified, claimed or settled). */
    stopAccepting: () => {
      accepting = false;
    },
    /** Settle calls running now (the shutdown waits for them). */
    inflightCount: () => running.size,
    /** Settles still running when the process must exit become in doubt, for the next start. */
    strandInflight(reason: string): number {
      let n = 0;
      for (const key of running.keys()) {
        const row = store.byKey(...(key.split(':') as [string, string]));
        if (row && store.markInDoubt(row.id, reason, clock.now())) {
          n++;
          logger.error('settlement cut off by shutdown; in doubt', rowFields(row));
        }
      }
      return n;
    },
    /** Resolves once nothing runs (or never, if a settle hangs: the caller bounds it). */
    async drain(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running.values()]);
    },
  };
}
