import type { Address } from 'viem';
import { formatUsdPrice, microToAtomic, microToUsd } from '../lib/money.ts';
import { bundlePrice } from '../pricing/tiers.ts';
import type { Hex } from 'viem';
import { BINDING_FORMULA, SALT_ECHO } from './binding.ts';
import { NETWORK, USDC_NAME, USDC_VERSION } from './eip3009.ts';
import type { PaymentRequiredBody } from './schemas.ts';

/**
 * The 402 PaymentRequired body: the spec's fields (price, top-level extra.binding, terms) plus
 * the standard x402 v1 fields (error, maxAmountRequired, asset, resource, maxTimeoutSeconds,
 * extra.name/version) so ordinary x402 clients can pay it.
 */
export const MAX_TIMEOUT_SECONDS = 300;
export const DEFAULT_CHALLENGE_ERROR = 'X-PAYMENT header is required';

export type ChallengeInput = {
  city: string;
  count: number;
  resource: string;
  payTo: Address;
  usdc: Address;
  /** The binding salt served now (binding.ts currentSalt). */
  salt: Hex;
  termsUrl: string;
  /** Said in every challenge so a wallet can tell a demo (settlement simulated) from a seller. */
  mode: 'mock' | 'live';
  error?: string;
  exhaustion?: { paidThrough: number; latest: number };
};

/**
 * The standard x402 v1 fields of a bundle's requirements (no binding, no salt): what a
 * facilitator is sent, and the base of every challenge's `accepts[0]`.
 */
export function standardAccept<N extends string>(
  i: Pick<ChallengeInput, 'city' | 'count' | 'resource' | 'payTo' | 'usdc'>,
  network: N,
) {
  const price = bundlePrice(i.count);
  return {
    scheme: 'exact' as const,
    network,
    payTo: i.payTo,
    description: `${i.count} isocast signals for ${i.city} (${price.tier.name} tier, ${microToUsd(price.unitMicro)} USDC each)`,
    mimeType: 'application/json' as const,
    maxAmountRequired: microToAtomic(price.totalMicro),
    asset: i.usdc,
    resource: i.resource,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
  };
}

export function paymentRequired(i: ChallengeInput): PaymentRequiredBody {
  const price = bundlePrice(i.count);
  const binding = {
    formula: BINDING_FORMULA as typeof BINDING_FORMULA,
    citySlug: i.city,
    count: i.count,
    // Recomputed by the server from (city, count, the bundle's purchase step, the minute), so
    // a client may bind to it and send nothing else; echoing it as payload.salt is optional.
    salt: i.salt,
    saltEcho: SALT_ECHO as typeof SALT_ECHO,
  };
  const body: PaymentRequiredBody = {
    x402Version: 1,
    error: i.error ?? DEFAULT_CHALLENGE_ERROR,
    accepts: [
      {
        ...standardAccept(i, NETWORK),
        price: formatUsdPrice(price.totalMicro),
        extra: { name: USDC_NAME, version: USDC_VERSION, binding, mode: i.mode },
      },
    ],
    extra: { binding, mode: i.mode },
    terms: i.termsUrl,
  };
  if (i.exhaustion) {
    body.paid_through = i.exhaustion.paidThrough;
    body.latest = i.exhaustion.latest;
  }
  return body;
}
