import type { KeyObject } from 'node:crypto';
import type { Hex } from 'viem';
import { boundedMap } from '../lib/bounded-map.ts';
import { listingFor } from './bazaar.ts';
import { currentSalt, type SaltStep } from './binding.ts';
import { bundleDescription, paymentRequired, standardAccept, usdcDomain, type ChallengeInput } from './envelope.ts';
import type { PaymentRequiredBody } from './schemas.ts';
import { PAYMENT_IDENTIFIER } from '../../packages/isocast-client/src/payment-id.ts';
import { paymentIdentifierDeclaration } from '../x402/payment-identifier.ts';
import {
  echoedVerbatim,
  encodeJsonText,
  PAYMENT_REQUIRED,
  paymentRequiredV2,
  type V2Extensions,
  withExtensions,
} from '../x402/v2.ts';
import type { PaymentRequirementsV1 } from '../x402/x-payment.ts';

type ChallengeDeps = Pick<ChallengeInput, 'payTo' | 'usdc' | 'termsUrl' | 'mode'> & {
  /** The HMAC key as a KeyObject, made once (on first use): salts and tags are computed on every paid request. */
  secret: () => KeyObject;
  baseUrl: string;
  nowMs: () => number;
  currentStep: (city: string, count: number) => SaltStep;
};

/** What a 402 offers: a bundle of `count` signals for `city`, on the route path the challenge names. */
export type BundleOffer = { city: string; count: number; resourcePath: string };

/** A challenge's own words: the reason (`error`) and, on exhaustion, where the wallet stands. */
export type ChallengeNote = Pick<ChallengeInput, 'error' | 'exhaustion'>;

/** Offers (bundles x resource shapes x served salts) and requirements kept: a flood of odd queries is not kept. */
const CACHE_MAX = 4096;

export function createChallenges(deps: ChallengeDeps) {
  const requirementsCache = boundedMap<PaymentRequirementsV1>(CACHE_MAX);
  // Kept per salt (every buyer's until it moves), frozen so no caller hands its words on; a note is never kept.
  const offers = boundedMap<PaymentRequiredBody>(CACHE_MAX);

  const seller = { payTo: deps.payTo, usdc: deps.usdc, termsUrl: deps.termsUrl, mode: deps.mode };
  const build = ({ city, count, resourcePath }: BundleOffer, salt: Hex, note: ChallengeNote) =>
    paymentRequired({ ...seller, city, count, resource: `${deps.baseUrl}${resourcePath}`, salt, ...note });

  return {
    challenge(offer: BundleOffer, note: ChallengeNote = {}): PaymentRequiredBody {
      const { city, count } = offer;
      const salt = currentSalt(deps.secret(), {
        city,
        count,
        step: deps.currentStep(city, count),
        nowMs: deps.nowMs(),
      });
      if (note.error !== undefined || note.exhaustion !== undefined) return build(offer, salt, note);
      return offers.memo(`${salt}|${count}|${city}|${offer.resourcePath}`, () => deepFreeze(build(offer, salt, note)));
    },

    listing: (resourcePath: string) => listingFor(resourcePath, deps.termsUrl),

    /** The standard v1 requirements a facilitator is sent: no binding, mode or salt, so built once per bundle. */
    requirements({ city, count, resourcePath }: BundleOffer, network: string): PaymentRequirementsV1 {
      return requirementsCache.memo(`${network}|${count}|${city}|${resourcePath}`, () => {
        const resource = `${deps.baseUrl}${resourcePath}`;
        const terms = { ...deps, count, resource, description: bundleDescription(city, count) };
        return { ...standardAccept(terms, network), extra: usdcDomain() };
      });
    },
  };
}

export type Challenges = ReturnType<typeof createChallenges>;

type EncodedOffer = { own: V2Extensions; json: string; encoded: string };

/** A kept (frozen) offer's PAYMENT-REQUIRED, made once: it lives exactly as long as the offer. */
const encodedOffers = new WeakMap<PaymentRequiredBody, EncodedOffer>();

function encodeOffer(body: PaymentRequiredBody): EncodedOffer {
  let e = encodedOffers.get(body);
  if (!e) {
    // Every paid route's 402 declares its Bazaar listing and the payment identifier.
    const listing = listingFor(body.accepts[0]!.resource, body.terms);
    const identifier = paymentIdentifierDeclaration();
    echoedVerbatim('schema', identifier.schema);
    const own = { ...listing?.extensions, [PAYMENT_IDENTIFIER]: identifier };
    const json = JSON.stringify(paymentRequiredV2(body, own, listing?.description));
    e = { own, json, encoded: encodeJsonText(json) };
    if (Object.isFrozen(body)) encodedOffers.set(body, e);
  }
  return e;
}

/** The headers every 402 challenge carries beside its v1 body; `more` adds a route's own extensions. */
export function challengeHeaders(body: PaymentRequiredBody, more: V2Extensions = {}): Record<string, string> {
  const e = encodeOffer(body);
  const json = withExtensions(e.json, more, e.own);
  // A challenge's salt moves with purchases and the minute: no HTTP cache may keep it.
  return { [PAYMENT_REQUIRED]: json === e.json ? e.encoded : encodeJsonText(json), 'cache-control': 'no-store' };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
