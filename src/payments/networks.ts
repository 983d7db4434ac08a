/**
 * Network names, in one place. The spec, x402 v2 and our 402 challenge name Base by its CAIP-2 id
 * `eip155:8453`; x402 v1 tooling (the legacy `x402` package, v1 facilitators, `x402-fetch` 1.x)
 * knows only its legacy name `base`. A buyer may send either; a facilitator is sent the one it
 * lists in `/supported` (settlers/negotiate.ts).
 */
import { BASE_CAIP2, BASE_V1_NAME } from '../../packages/isocast-client/src/chain.ts';

// The names themselves live in the buyer package (chain.ts), which the buyers' checks read too.
export { BASE_ALIASES, BASE_CAIP2, BASE_CHAIN_ID, BASE_V1_NAME } from '../../packages/isocast-client/src/chain.ts';

/** Mock-mode settlement wallet when PAY_TO is unset: a fixed, obviously-not-real address. */
export const MOCK_PAY_TO = '0x000000000000000000000000000000000000dEaD';

/** The wallet payments settle to: PAY_TO, or the mock wallet in mock mode (live mode requires PAY_TO). */
export function payTo(settings: { PAY_TO?: string | undefined; PAYMENT_MODE: 'mock' | 'live' }): string | null {
  return settings.PAY_TO ?? (settings.PAYMENT_MODE === 'mock' ? MOCK_PAY_TO : null);
}

/** x402 v1 legacy names of the EVM chains the v1 packages list beside Base (for reports only). */
const V1_NAMES: ReadonlyMap<string, string> = new Map([
  [BASE_CAIP2, BASE_V1_NAME],
  ['eip155:84532', 'base-sepolia'],
]);

/** The x402 v1 legacy name of a CAIP-2 network, when v1 tooling has one. */
export function v1NameOf(caip2: string): string | undefined {
  return V1_NAMES.get(caip2);
}

/** The CAIP-2 id of a network named either way (`base` -> `eip155:8453`). */
export function caip2Of(name: string): string | undefined {
  if (/^eip155:[0-9]+$/.test(name)) return name;
  for (const [caip2, v1] of V1_NAMES) if (v1 === name) return caip2;
  return undefined;
}

/** True for any spelling of Base mainnet. */
export function isBase(name: string): boolean {
  return caip2Of(name) === BASE_CAIP2;
}
