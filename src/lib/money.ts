/**
 * Money is integer micro-USDC everywhere. USDC has 6 decimals, so one micro-USDC is exactly one
 * atomic token unit: amounts go on chain unchanged. Floats appear only at the JSON edge, where the
 * spec prints USD numbers such as 0.0045.
 */
export type Micro = number;

const MICRO_PER_USD = 1_000_000;

/** USD number for JSON output. Exact for every value we produce (at most 6 decimals). */
export function microToUsd(micro: Micro): number {
  assertMicro(micro);
  return Number(formatDecimal(micro));
}

/** `$0.0045`-style price string: no trailing zeros, at least two decimals. */
export function formatUsdPrice(micro: Micro): string {
  assertMicro(micro);
  const s = formatDecimal(micro);
  const [whole, frac = ''] = s.split('.');
  return `$${whole}.${frac.padEnd(2, '0')}`;
}

/** Atomic token units as the decimal string x402 `maxAmountRequired` wants. */
export function microToAtomic(micro: Micro): string {
  assertMicro(micro);
  return String(micro);
}

function formatDecimal(micro: Micro): string {
  const whole = Math.floor(micro / MICRO_PER_USD);
  const frac = String(micro % MICRO_PER_USD)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : String(whole);
}

function assertMicro(micro: Micro): void {
  if (!Number.isSafeInteger(micro) || micro < 0) throw new RangeError(`not a micro-USDC amount: ${micro}`);
}
