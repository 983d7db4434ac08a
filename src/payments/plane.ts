import type { Address } from 'viem';
import type { Metrics } from '../lib/metrics.ts';
import type { BundleOffer } from './challenge.ts';
import { paymentKey } from './inflight.ts';
import { paymentCounters, type PurchaseOutcome } from './outcomes.ts';
import { MOCK_PAY_TO, payTo } from './pay-to.ts';
import { createPurchaseFlow, type PurchaseOptions, type PurchaseSettings } from './purchase.ts';
import type { PaymentHeader } from '../x402/v2.ts';
import { rowFields, type PaymentRow } from './store.ts';

/** The configuration the plane reads; the wiring's `Config` satisfies it. */
type PaymentSettings = Parameters<typeof payTo>[0] & {
  USDC_ADDRESS: string;
  OFAC_REQUIRED: boolean;
  V2_NONCE?: 'any' | 'bound';
  BASE_URL: string;
  TERMS_URL: string;
  RECONCILE_INTERVAL_MS: number;
};

/** Challenge, purchase, ledger, coalescing, counters: the plane answers outcomes, the paywall says them over HTTP. */
type PaymentPlaneDeps = Pick<
  PurchaseSettings,
  'db' | 'stores' | 'secret' | 'settler' | 'sanctions' | 'clock' | 'logger' | 'chainVerifier' | 'limitPayer'
> & {
  config: PaymentSettings;
  metrics?: Metrics;
};

export type PaymentPlane = ReturnType<typeof paymentPlaneFor>;

export function paymentPlaneFor(deps: PaymentPlaneDeps) {
  const { clock, logger, config } = deps;
  const counters = paymentCounters(deps.metrics);
  let accepting = true;
  const flow = createPurchaseFlow({
    ...deps,
    ofacRequired: config.OFAC_REQUIRED,
    payTo: (payTo(config) ?? MOCK_PAY_TO) as Address,
    usdc: config.USDC_ADDRESS as Address,
    v2Nonce: config.V2_NONCE ?? 'any',
    baseUrl: config.BASE_URL,
    termsUrl: config.TERMS_URL,
    mode: config.PAYMENT_MODE,
    // The reconciler's interval: an in-doubt buyer retrying sooner would find nothing new.
    retryAfterSeconds: Math.max(1, Math.ceil((config.RECONCILE_INTERVAL_MS ?? 30_000) / 1000)),
    onCommit: counters.committed,
    accepting: () => accepting,
  });
  const { store, ledger, inflight } = flow;

  return {
    challenge: flow.challenges.challenge,
    store,

    async purchase(header: PaymentHeader, offer: BundleOffer, opts: PurchaseOptions = {}): Promise<PurchaseOutcome> {
      try {
        const o = await flow.purchase(header, offer, opts);
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
      const work = inflight.exclusive(paymentKey(row.payer, row.nonce), async () => {
        // Re-read inside the exclusive section: the snapshot may predate a request's work.
        const cur = store.get(row.id)!;
        return cur.status === 'claimed' || cur.status === 'in_doubt' ? flow.resolve(cur, null) : ledger.answer(cur);
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
    inflightCount: () => inflight.size(),
    /** Settles still running when the process must exit become in doubt, for the next start. */
    strandInflight(reason: string): number {
      let n = 0;
      for (const key of inflight.keys()) {
        const row = store.byKey(...(key.split(':') as [string, string]));
        if (row && store.markInDoubt(row.id, reason, clock.now())) {
          n++;
          logger.error('settlement cut off by shutdown; in doubt', rowFields(row));
        }
      }
      return n;
    },
    drain: inflight.drain,
  };
}
