import type { Address, Hex } from 'viem';
import { formatUsdPrice, microToAtomic, microToUsd } from '../lib/money.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { BINDING_FORMULA, SALT_ECHO } from '../../packages/isocast-client/src/binding.ts';
import { NETWORK, USDC_NAME, USDC_VERSION } from '../x402/networks.ts';
import type { PaymentRequiredBody } from './schemas.ts';

/** The 402 body: the spec's fields plus the standard x402 v1 ones, so ordinary x402 clients can pay it. */
const MAX_TIMEOUT_SECONDS = 300;
const DEFAULT_CHALLENGE_ERROR = 'X-PAYMENT header is required';

export type ChallengeInput = {
  city: string;
  count: number;
  resource: string;
  payTo: Address;
  usdc: Address;
  salt: Hex;
  termsUrl: string;
  /** Said in every challenge so a wallet can tell a demo (settlement simulated) from a seller. */
  mode: 'mock' | 'live';
  error?: string;
  exhaustion?: { paidThrough: number; latest: number };
};

type AcceptTerms = Pick<ChallengeInput, 'count' | 'resource' | 'payTo' | 'usdc'> & { description: string };

export function bundleDescription(city: string, count: number): string {
  const price = bundlePrice(count);
  return `${count} isocast signals for ${city} (${price.tier.name} tier, ${microToUsd(price.unitMicro)} USDC each)`;
}

/** The standard v1 fields of a bundle's requirements, no binding or salt: what a facilitator is sent. */
export function standardAccept<N extends string>(t: AcceptTerms, network: N) {
  return {
    scheme: 'exact' as const,
    network,
    payTo: t.payTo,
    description: t.description,
    mimeType: 'application/json' as const,
    maxAmountRequired: microToAtomic(bundlePrice(t.count).totalMicro),
    asset: t.usdc,
    resource: t.resource,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
  };
}

/** USDC's EIP-712 domain as x402 `exact` clients read it from `extra`. */
export function usdcDomain() {
  return { name: USDC_NAME as typeof USDC_NAME, version: USDC_VERSION as typeof USDC_VERSION };
}

/** One `accepts` entry, the one builder for the challenge and every discovery document so they cannot drift. */
export function offeredAccept<E extends object>(t: AcceptTerms, extra: E) {
  return {
    ...standardAccept(t, NETWORK),
    price: formatUsdPrice(bundlePrice(t.count).totalMicro),
    extra: { ...usdcDomain(), ...extra },
  };
}

export function paymentRequired(i: ChallengeInput): PaymentRequiredBody {
  const binding = {
    formula: BINDING_FORMULA as typeof BINDING_FORMULA,
    citySlug: i.city,
    count: i.count,
    // The server recomputes it, so a client may bind to it and send nothing else.
    salt: i.salt,
    saltEcho: SALT_ECHO as typeof SALT_ECHO,
  };
  const body: PaymentRequiredBody = {
    x402Version: 1,
    error: i.error ?? DEFAULT_CHALLENGE_ERROR,
    accepts: [offeredAccept({ ...i, description: bundleDescription(i.city, i.count) }, { binding, mode: i.mode })],
    extra: { binding, mode: i.mode },
    terms: i.termsUrl,
  };
  if (i.exhaustion) {
    body.paid_through = i.exhaustion.paidThrough;
    body.latest = i.exhaustion.latest;
  }
  return body;
}
