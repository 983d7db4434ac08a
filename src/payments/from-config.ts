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

interface PaymentSettings {
  PAYMENT_MODE: 'mock' | 'live';
  PAY_TO?: string | undefined;
  USDC_ADDRESS: string;
  OFAC_REQUIRED: boolean;
  V2_NONCE?: 'any' | 'bound';
  BASE_URL: string;
  TERMS_URL: string;
  RECONCILE_INTERVAL_MS: number;
}

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
  const { config, ...deps } = d;
  return createPaymentPlane({
    ...deps,
    ofacRequired: config.OFAC_REQUIRED,
    payTo: (payTo(config) ?? MOCK_PAY_TO) as Address,
    usdc: config.USDC_ADDRESS as Address,
    baseUrl: config.BASE_URL,
    termsUrl: config.TERMS_URL,
    mode: config.PAYMENT_MODE,
    v2Nonce: config.V2_NONCE ?? 'any',
    // The reconciler's interval: an in-doubt buyer retrying sooner would find nothing new.
    retryAfterSeconds: Math.max(1, Math.ceil((config.RECONCILE_INTERVAL_MS ?? 30_000) / 1000)),
  });
}
