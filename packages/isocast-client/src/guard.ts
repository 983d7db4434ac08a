import { isAddress, isAddressEqual, type Address, type Hex } from 'viem';
import { BASE_ALIASES, BASE_CAIP2, BASE_CHAIN_ID, BASE_USDC, USDC_NAME, USDC_VERSION } from './chain.ts';
import { bundlePrice, MAX_COUNT, MIN_COUNT, TIERS } from './pricing.ts';
import { findControls } from './sanitize.ts';

/**
 * The buyer's checks, run on every 402 before anything is signed. The server is not trusted: the
 * amount must be exactly the bundle price this client computes from the count with its own tier
 * table, the token must be Base's USDC under its real EIP-712 domain, the chain must be Base, and
 * the recipient must be the wallet the server publishes. Any doubt means no signature at all.
 */
export class ChallengeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChallengeRefused';
  }
}

export type Binding = { citySlug: string; count: number; salt: Hex; saltEcho?: 'payload.salt' };

export type Expectations = {
  /** The bundle the buyer asked for; a challenge binding anything else is refused. */
  city?: string;
  count?: number;
  /** The settlement wallet the server publishes (`payTo` of GET /v1/signals/meta). */
  payTo?: string;
  /** Cap on this one payment in atomic USDC; defaults to (and can only lower) the computed price. */
  maxAtomic?: bigint;
  /** How the cap is called in messages (`--max-usd`, `spend controls`). */
  capName?: string;
  /** USDC contract; Base's canonical USDC unless a test chain deploys its own. */
  usdc?: string;
};

/** The tier table this client was built with, in the shape GET /v1/signals/meta publishes. */
export function builtInTiers(): { minCount: number; unitAtomic: bigint }[] {
  return TIERS.map((t) => ({ minCount: t.minCount, unitAtomic: BigInt(t.unitMicro) }));
}

/** `$0.10`, `0.1`, `0.100000` -> atomic USDC (6 decimals); null when it is not a plain decimal. */
export function usdToAtomic(raw: string): bigint | null {
  const m = /^\$?(\d{1,12})(?:\.(\d{1,6}))?$/.exec(raw.trim());
  if (!m) return null;
  return BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}

export function formatAtomic(atomic: bigint): string {
  const whole = atomic / 1_000_000n;
  const frac = (atomic % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}

/** `$0.0045`, `$0.10`: a price as the server's `price` field writes it (at least two decimals). */
export function formatUsd(atomic: bigint): string {
  const [whole, frac = ''] = formatAtomic(atomic).split('.');
  return `$${whole}.${frac.padEnd(2, '0')}`;
}

/** Compares the server's published tiers with the built-in table; returns a problem or null. */
export function tierProblem(published: unknown): string | null {
  if (!Array.isArray(published)) return 'the server publishes no tier table';
  const ours = builtInTiers();
  const theirs = published.map((t: { minCount?: unknown; unitPriceUsd?: unknown } | null) => ({
    minCount: Number(t?.minCount),
    unit: usdToAtomic(String(t?.unitPriceUsd)),
  }));
  const same =
    theirs.length === ours.length &&
    theirs.every((t, i) => t.minCount === ours[i]!.minCount && t.unit === ours[i]!.unitAtomic);
  return same
    ? null
    : "the server's price tiers differ from the ones built into this client (update isocast, or do not buy from this server)";
}

/** One `accepts` entry of a 402: untrusted JSON, so checkChallenge checks every field it reads at run time. */
// biome-ignore lint/suspicious/noExplicitAny: a server's JSON, read field by field with run-time checks
export type Accept = Record<string, any>;

/** A 402 to check: its whole `body`, the `accepts` entry to pay and that entry's binding. */
export type Challenge = { body: unknown; accept: Accept; binding: Binding };

/**
 * Checks one `accepts` entry of a 402 (with its binding) against the buyer's expectations.
 * Returns the amount to sign; throws ChallengeRefused naming the first problem.
 */
export function checkChallenge({ body, accept, binding }: Challenge, exp: Expectations): bigint {
  const dirty = findControls(body);
  if (dirty)
    throw new ChallengeRefused(
      `the challenge carries terminal control characters (in ${dirty}); a server that does this is not paid`,
    );
  if (accept.scheme !== 'exact')
    throw new ChallengeRefused(`the challenge asks for scheme ${String(accept.scheme)}, not exact`);
  if (!BASE_ALIASES.includes(accept.network)) {
    throw new ChallengeRefused(
      `the challenge asks for payment on ${String(accept.network)}, not Base (${BASE_CAIP2}, chain ${BASE_CHAIN_ID})`,
    );
  }
  const { count, citySlug } = binding;
  if (exp.city !== undefined && citySlug !== exp.city)
    throw new ChallengeRefused(`the challenge binds city ${citySlug}, not ${exp.city}`);
  if (exp.count !== undefined && count !== exp.count)
    throw new ChallengeRefused(`the challenge binds ${count} signals, not ${exp.count}`);
  if (!Number.isSafeInteger(count) || count < MIN_COUNT || count > MAX_COUNT) {
    throw new ChallengeRefused(
      `the challenge binds a count of ${count}; a bundle is ${MIN_COUNT} to ${MAX_COUNT} signals`,
    );
  }
  const price = bundlePrice(count);
  const expected = BigInt(price.totalMicro);
  const asked = /^\d{1,30}$/.test(String(accept.maxAmountRequired)) ? BigInt(accept.maxAmountRequired) : null;
  if (asked !== expected) {
    throw new ChallengeRefused(
      `the challenge asks for ${asked === null ? String(accept.maxAmountRequired) : `${formatAtomic(asked)} USDC`} ` +
        `(maxAmountRequired) but ${count} signals cost ${formatAtomic(expected)} USDC (${price.tier.name} tier)`,
    );
  }
  if (accept.price !== undefined && usdToAtomic(String(accept.price)) !== expected) {
    throw new ChallengeRefused(
      `the challenge's price ${String(accept.price)} differs from the ${formatUsd(expected)} that ${count} signals cost`,
    );
  }
  const cap = exp.maxAtomic ?? expected;
  if (expected > cap)
    throw new ChallengeRefused(
      `${count} signals cost ${formatAtomic(expected)} USDC, above your ${exp.capName ?? 'cap'} of ${formatAtomic(cap)} USDC`,
    );
  const usdc = exp.usdc ?? BASE_USDC;
  if (
    typeof accept.asset !== 'string' ||
    !isAddress(accept.asset, { strict: false }) ||
    !isAddressEqual(accept.asset as Address, usdc as Address)
  ) {
    throw new ChallengeRefused(`the challenge asks for token ${String(accept.asset)}, not USDC on Base (${usdc})`);
  }
  const name = accept.extra?.name ?? USDC_NAME;
  const version = accept.extra?.version ?? USDC_VERSION;
  if (name !== USDC_NAME || version !== USDC_VERSION) {
    throw new ChallengeRefused(
      `the challenge's EIP-712 domain is ${String(name)}/${String(version)}, not USDC's ${USDC_NAME}/${USDC_VERSION}`,
    );
  }
  if (
    typeof accept.payTo !== 'string' ||
    !isAddress(accept.payTo, { strict: false }) ||
    /^0x0{40}$/i.test(accept.payTo)
  ) {
    throw new ChallengeRefused(`the challenge pays to ${String(accept.payTo)}, which is not a usable wallet`);
  }
  if (exp.payTo !== undefined && !isAddressEqual(accept.payTo as Address, exp.payTo as Address)) {
    throw new ChallengeRefused(
      `the challenge pays to ${accept.payTo}, but the server publishes ${exp.payTo} as its settlement wallet`,
    );
  }
  if (binding.saltEcho !== undefined && binding.saltEcho !== 'payload.salt') {
    throw new ChallengeRefused(
      `the challenge asks for the salt echoed as ${String(binding.saltEcho)}, which this client does not know`,
    );
  }
  return expected;
}
