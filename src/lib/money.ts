/** Integer micro-USDC everywhere: one atomic USDC unit, so amounts go on chain unchanged; floats only in JSON. */
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
  const [whole, frac = ''] = formatDecimal(micro).split('.');
  return `$${whole}.${frac.padEnd(2, '0')}`;
}

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
