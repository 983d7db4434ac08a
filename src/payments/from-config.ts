import type { Address } from 'viem';
import { MOCK_PAY_TO, payTo } from './pay-to.ts';
import type { Db } from '../db/open.ts';
import type { LedgerStores } from './ledger.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { createPaymentPlane, type PaymentPlane } from './plane.ts';
import type { Settler } from './settlers/settler.ts';
import type { TypedDataVerifier } from './verify.ts';

/** The settings the plane reads; the server's Config carries them (config.ts). */
export interface PaymentSettings {
  PAYMENT_MODE: 'mock' | 'live';
  PAY_TO?: string | undefined;
  USDC_ADDRESS: string;
  OFAC_REQUIRED: boolean;
  V2_NONCE?: 'any' | 'bound';
  BASE_URL: string;
  TERMS_URL: string;
  RECONCILE_INTERVAL_MS: number;
}

/** The plane as configured: effective settlement wallet, USDC address, public addresses. */
export function paymentPlaneFor(d: {
  config: PaymentSettings;
  db: Db;
  stores: LedgerStores;
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
    stores: d.stores,
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
    v2Nonce: d.config.V2_NONCE ?? 'any',
    // The reconciler's interval: an in-doubt buyer retrying sooner would find nothing new.
    retryAfterSeconds: Math.max(1, Math.ceil((d.config.RECONCILE_INTERVAL_MS ?? 30_000) / 1000)),
  });
}
