import type { KeyObject } from 'node:crypto';
import type { Address } from 'viem';
import { listingFor } from './bazaar.ts';
import { currentSalt, type SaltStep } from './binding.ts';
import { bundleDescription, paymentRequired, standardAccept, usdcDomain, type ChallengeInput } from './envelope.ts';
import type { PaymentRequiredBody } from './schemas.ts';
import { PAYMENT_IDENTIFIER, paymentIdentifierDeclaration } from '../x402/payment-identifier.ts';
import { encodePaymentRequired, PAYMENT_REQUIRED, paymentRequiredV2, type V2Extensions } from '../x402/v2.ts';
import type { PaymentRequirementsV1 } from '../x402/x-payment.ts';

/**
 * What the plane offers a buyer: the 402 challenge (the bundle's current salt, binding.ts) and the
 * standard x402 requirements sent to a facilitator with a settle call.
 */
export type ChallengeDeps = {
  /** The HMAC key as a KeyObject, made once (on first use): salts and tags are computed on every paid request. */
  secret: () => KeyObject;
  payTo: Address;
  usdc: Address;
  baseUrl: string;
  termsUrl: string;
  mode: 'mock' | 'live';
  nowMs: () => number;
  /** The bundle's current purchase step (salt-steps.ts). */
  currentStep: (city: string, count: number) => SaltStep;
};

/** What a 402 offers: a bundle of `count` signals for `city`, on the route path the challenge names. */
export type BundleOffer = { city: string; count: number; resourcePath: string };

/** A challenge's own words: the reason (`error`) and, on exhaustion, where the wallet stands. */
export type ChallengeNote = Pick<ChallengeInput, 'error' | 'exhaustion'>;

export function createChallenges(deps: ChallengeDeps) {
  // Bounded: cities x counts x the two resource shapes; a flood of odd `since` values is not kept.
  const requirementsCache = new Map<string, PaymentRequirementsV1>();
  const REQUIREMENTS_CACHE_MAX = 4096;

  return {
    challenge: ({ city, count, resourcePath }: BundleOffer, note: ChallengeNote = {}): PaymentRequiredBody =>
      paymentRequired({
        city,
        count,
        resource: `${deps.baseUrl}${resourcePath}`,
        payTo: deps.payTo,
        usdc: deps.usdc,
        salt: currentSalt(deps.secret(), { city, count, step: deps.currentStep(city, count), nowMs: deps.nowMs() }),
        termsUrl: deps.termsUrl,
        mode: deps.mode,
        ...note,
      }),

    /** The paid route's Bazaar listing, for a v2 settle call (x402/facilitator-body.ts). */
    listing: (resourcePath: string) => listingFor(resourcePath, deps.termsUrl),

    /**
     * Standard x402 v1 requirements: our binding and `mode` stay out of what a facilitator is
     * sent. Built once per (city, count, resource, network), with no salt: the challenge's salt
     * would be a step lookup and an HMAC per settle only to be stripped.
     */
    requirements({ city, count, resourcePath }: BundleOffer, network: string): PaymentRequirementsV1 {
      const cacheKey = `${network}|${count}|${city}|${resourcePath}`;
      let r = requirementsCache.get(cacheKey);
      if (!r) {
        const accept = standardAccept(
          {
            count,
            resource: `${deps.baseUrl}${resourcePath}`,
            payTo: deps.payTo,
            usdc: deps.usdc,
            description: bundleDescription(city, count),
          },
          network,
        );
        r = { ...accept, extra: usdcDomain() };
        if (requirementsCache.size < REQUIREMENTS_CACHE_MAX) requirementsCache.set(cacheKey, r);
      }
      return r;
    },
  };
}

export type Challenges = ReturnType<typeof createChallenges>;

/**
 * What every 402 of a paid route declares: the route's Bazaar listing (bazaar.ts) and the
 * payment identifier. A route adds its own (sign-in-with-x) through `challengeHeaders`' second
 * argument.
 */
export function standardExtensions(body: PaymentRequiredBody): V2Extensions {
  const listing = listingFor(body.accepts[0]!.resource, body.terms);
  return { ...listing?.extensions, [PAYMENT_IDENTIFIER]: paymentIdentifierDeclaration() };
}

/** The headers every 402 challenge carries beside its v1 body; `more` adds a route's own extensions. */
export function challengeHeaders(body: PaymentRequiredBody, more: V2Extensions = {}): Record<string, string> {
  const extensions = { ...standardExtensions(body), ...more };
  // `resource.description` is the route's listing description (what a catalogue shows, the same
  // for every bundle); the v1 body keeps the bundle's own line.
  const description = listingFor(body.accepts[0]!.resource, body.terms)?.description;
  // A challenge's salt moves with purchases and the minute: no cache may keep it.
  return {
    [PAYMENT_REQUIRED]: encodePaymentRequired(paymentRequiredV2(body, extensions, description)),
    'cache-control': 'no-store',
  };
}
