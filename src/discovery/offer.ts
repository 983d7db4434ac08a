import type { Address } from 'viem';
import type { RouteDoc } from '../lib/route-doc.ts';
import { formatUsdPrice, microToUsd } from '../lib/money.ts';
import { BASE_UNIT_MICRO, MIN_SPEND_MICRO, tiersPublic } from '../pricing/tiers.ts';
import { MAX_COUNT, MIN_COUNT, TIERS } from '../../packages/isocast-client/src/pricing.ts';
import { BINDING_FORMULA } from '../../packages/isocast-client/src/binding.ts';
import { NETWORK, USDC_NAME, USDC_VERSION } from '../x402/networks.ts';
import { offeredAccept } from '../payments/envelope.ts';

/** What the documents describe: the routers' RouteDoc lists, the payment terms and the cities. */
export type DiscoveryDeps = {
  docs: readonly RouteDoc[];
  baseUrl: string;
  termsUrl: string;
  apiVersion: string;
  disclaimer: string;
  paymentMode: 'mock' | 'live';
  /** V2_NONCE: whether PAYMENT-SIGNATURE takes any nonce (the standard exact scheme). */
  v2Nonce: 'any' | 'bound';
  /** Settlement wallet; null only in a misconfigured live mode (which refuses to start). */
  payTo: string | null;
  usdc: string;
  /** Every served stream; `kind` low marks a daily-low stream (absent: a daily-high city). */
  cities: readonly { slug: string; displayName: string; unit: string; timezone: string; kind?: 'high' | 'low' }[];
};

export const SERVICE_NAME = 'isocast';
export const SERVICE_SUMMARY =
  'Bucket-crossing signals on daily-high temperature prediction markets, sold per city in prepaid bundles over x402 (USDC on Base).';
export const DEFAULT_BUNDLE = 20;

/** The facts every discovery document states, in one place, so they cannot disagree with each other or the 402. */
export function offerOf(d: DiscoveryDeps) {
  const url = (path: string) => d.baseUrl + path;
  const tiers = tiersPublic().map((t, i) => ({ ...t, price: formatUsdPrice(TIERS[i]!.unitMicro * t.minCount) }));
  return {
    ...d,
    url,
    // The spec's cities are the daily-high markets; the daily-low streams are sold like cities, listed apart.
    high: d.cities.filter((c) => c.kind !== 'low'),
    low: d.cities.filter((c) => c.kind === 'low'),
    anyNonce: d.v2Nonce === 'any',
    tiers,
    from: tiers[0]!,
    pricing: {
      currency: 'USDC',
      network: NETWORK,
      asset: d.usdc,
      payTo: d.payTo,
      unitPriceUsd: microToUsd(BASE_UNIT_MICRO),
      minSpendUsd: microToUsd(MIN_SPEND_MICRO),
      minCount: MIN_COUNT,
      maxCount: MAX_COUNT,
      defaultCount: DEFAULT_BUNDLE,
      tiers,
      rule: 'total = count x the unit price of the largest tier whose minCount is at most count',
    },
    paid: d.docs.filter(isPaid),
    steps: paymentSteps(url),
    reading: readingSteps(d, url),
  };
}

export type Offer = ReturnType<typeof offerOf>;

/** Who may call a documented route, from its security alternatives (admin: the instance's operator). */
export function access(doc: RouteDoc): 'free' | 'paid' | 'paid-or-receipt' | 'operator' {
  const needs = (scheme: string) => (doc.security ?? []).some((alt) => alt.includes(scheme));
  if (needs('admin')) return 'operator';
  if (!needs('x402')) return 'free';
  return needs('receipt') ? 'paid-or-receipt' : 'paid';
}

export const isPaid = (doc: RouteDoc): boolean => access(doc).startsWith('paid');

/** A numbered Markdown list, so agents can follow the steps literally. */
export const numbered = (steps: string[]) => steps.map((s, i) => `${i + 1}. ${s}`).join('\n');

/** x402 `accepts` of a paid route, one per tier minimum: the 402's fields but the salt, which is served per request. */
export function acceptsFor(o: Offer, path: string) {
  if (!o.payTo) return [];
  return TIERS.map((t) =>
    offeredAccept(
      {
        count: t.minCount,
        resource: o.url(path),
        payTo: o.payTo as Address,
        usdc: o.usdc as Address,
        description: `${t.name}: ${t.minCount} isocast signals for one city at ${microToUsd(t.unitMicro)} USDC each (any count from ${t.minCount} gets this unit price)`,
      },
      {
        tier: t.name,
        count: t.minCount,
        mode: o.paymentMode,
        binding: {
          formula: BINDING_FORMULA,
          salt: 'served in every 402 challenge (accepts[].extra.binding.salt); clients cannot compute it; it moves after each settled purchase of the bundle and every minute',
        },
      },
    ),
  );
}

/** `x-payment-info` of a paid OpenAPI operation, as agent tooling reads it. */
export function paymentInfo(o: Offer, doc: RouteDoc) {
  if (!isPaid(doc)) return null;
  const usd = (micro: number) => microToUsd(micro).toFixed(6);
  return {
    pricingMode: 'range',
    minPrice: usd(MIN_SPEND_MICRO),
    maxPrice: usd(TIERS.at(-1)!.unitMicro * MAX_COUNT),
    price: { mode: 'dynamic', currency: 'USD', min: usd(MIN_SPEND_MICRO), unit: 'count signals of one city' },
    protocols: [{ x402: { version: 1, scheme: 'exact', network: NETWORK, asset: o.usdc, payTo: o.payTo } }],
    network: NETWORK,
    asset: o.usdc,
    payTo: o.payTo,
    tiers: o.tiers.map(({ name, minCount, unitPriceUsd, price }) => ({ name, minCount, unitPriceUsd, from: price })),
    rule: o.pricing.rule,
    nonceBinding: BINDING_FORMULA,
  };
}

type Url = (path: string) => string;

function paymentSteps(url: Url): string[] {
  return [
    `Pick a city slug from ${url('/v1/cities')} and a bundle size count (integer, at least ${MIN_COUNT}; total at least ${formatUsdPrice(MIN_SPEND_MICRO)}).`,
    `POST ${url('/v1/subscribe')}?city=<slug>&count=<count> with no X-Payment header. The answer is HTTP 402 with a PaymentRequired body (the same offer is in the x402 v2 PAYMENT-REQUIRED header; a v2 client pays it with PAYMENT-SIGNATURE).`,
    "From accepts[0] read payTo, asset (the USDC contract), maxAmountRequired (atomic USDC, 6 decimals), maxTimeoutSeconds and extra.binding.salt (server-derived from the city, the count, the bundle's purchase step and the minute).",
    `Compute the binding nonce: ${BINDING_FORMULA}, where payer is your wallet address (20 bytes), citySlug the slug as UTF-8 bytes, count a uint256 and salt the bytes32 from the challenge. Stock x402 clients use a random nonce and are refused; the nonce must bind (payer, city, count).`,
    `Sign an EIP-712 TransferWithAuthorization (EIP-3009) with domain {name: "${USDC_NAME}", version: "${USDC_VERSION}", chainId: 8453, verifyingContract: asset} and message {from: payer, to: payTo, value: maxAmountRequired, validAfter: 0, validBefore: now + maxTimeoutSeconds, nonce}.`,
    'Build X-Payment: base64 of the JSON {"x402Version":1,"scheme":"exact","network":"eip155:8453","payload":{"signature":"0x<65 bytes>","authorization":{"from":"0x<payer>","to":"0x<payTo>","value":"<maxAmountRequired>","validAfter":"0","validBefore":"<unix seconds>","nonce":"0x<binding nonce>"},"salt":"0x<extra.binding.salt>"}}; numbers are decimal strings. payload.salt (echoing the challenge salt, where extra.binding.saltEcho says) is optional: without it the server finds the salt it served.',
    'Repeat the same POST with the X-Payment header. 200 returns a SubscribeResult; keep its receiptToken secret: it reads your signals without paying again. It is issued once, to this answer only: sending the same header again returns the state (idempotent: true) without a token. Lost it? POST /v1/receipts with a wallet signature.',
    'Buying the same bundle again: ask for a new 402 and sign a new authorization (the salt moves after every settled purchase of the bundle, so each purchase has its own nonce). 503 "settlement pending": the outcome is not known yet; send the same X-Payment again after retryAfterSeconds, you will not be charged twice. "you were not charged" is final for that nonce: pay again with a new authorization bound to a later 402\'s salt (a refusal does not move the salt; the minute does).',
  ];
}

function readingSteps(d: DiscoveryDeps, url: Url): string[] {
  return [
    `GET ${url('/v1/signals')}?city=<slug>&since=0 with header "Authorization: Bearer <receiptToken>".`,
    'The page holds signals with since < seq <= paid_through in ascending seq order, at most 100. Pass next_cursor as the next since; more=true means another page is ready now.',
    'When since >= paid_through your bundle is used up: the answer is 402 with paid_through and latest. Buy another bundle to go on (buying while behind starts from latest, so you never pay for a skipped backlog). A since at or past latest but below paid_through is a 200 empty page: your paid signals are still to come.',
    `Or sign in with the wallet that paid, no token and no payment (x402 v2 sign-in-with-x): every 402 of ${url('/v1/signals')} declares PAYMENT-REQUIRED extensions["sign-in-with-x"] (a SIWE message to sign on eip155:8453: domain ${new URL(d.baseUrl).host}, a fresh nonce, expiring in 300 s); send the signed payload, base64 JSON, as header SIGN-IN-WITH-X on the same request and it reads like the wallet's receipt token. Each nonce works once; a sign-in for another server is refused (401). @x402/fetch does this itself with @x402/extensions' createSIWxClientExtension registered on its client.`,
    `Lost or expired receipt token: sign the EIP-712 ReceiptRequest {wallet: address, origin: string, timestamp: uint256} (domain {name: "Isocast", version: "1", chainId: 8453}; origin exactly "${new URL(d.baseUrl).origin}", this server; timestamp in unix seconds, within 600 s) and POST {wallet, origin, timestamp, signature} to ${url('/v1/receipts')}; each signature works once. The same fields signed as ReceiptRevocation and POSTed to ${url('/v1/receipts/revoke')} revoke every token of the wallet.`,
    "Signals never expire: since=0 replays everything you are entitled to. Poll politely (every 30 s or more); a new signal appears only when a city's daily high crosses into another bucket.",
  ];
}
