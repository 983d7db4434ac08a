import type {
  FindDefaultAsset,
  PaymentPayloadContext,
  PaymentPayloadResult,
  PaymentRequirements,
  SchemeNetworkClient,
} from '@x402/core/types';
import type { Address } from 'viem';
import { BASE_ALIASES, BASE_CAIP2, BASE_USDC } from './chain.ts';
import { type Accept, ChallengeRefused, type Expectations } from './guard.ts';
import { bindingOf, signExact, type SignableAccount } from './pay.ts';
import { PAYMENT_IDENTIFIER, isValidPaymentId } from './payment-id.ts';

/**
 * isocast's `exact` payment on Base as an `@x402/core` scheme client, so a stock x402 client
 * (`x402Client`, `@x402/fetch`, `@x402/axios`) can pay isocast, over x402 v1 (`X-Payment`, on
 * `base` and `eip155:8453`) and v2 (`PAYMENT-REQUIRED` / `PAYMENT-SIGNATURE`, on `eip155:8453`).
 * Stock EVM clients draw a random nonce, which isocast refuses; this one reads `extra.binding`,
 * computes the bound nonce and signs the EIP-3009 authorization with any viem account (v1 echoes
 * the salt as payload.salt when asked; v2's `accepted` echoes it by itself). Before signing it
 * runs the same checks as `payFor402` and the isocast CLI (guard.ts): exact tier price for the bound count,
 * USDC on Base, USDC's domain.
 *
 *   const client = new x402Client();
 *   registerIsocast(client, new IsocastExactScheme(account, { payTo }));
 *   const payFetch = wrapFetchWithPayment(fetch, client);
 *
 * Register both versions: `@x402/fetch` reads the v2 header first whenever a 402 carries one, so
 * a client with only v1 schemes fails with "No client registered for x402 version: 2".
 */
export const ISOCAST_NETWORKS = BASE_ALIASES;
/** The x402 v2 network (CAIP-2) isocast's challenges name. */
export const ISOCAST_NETWORK_V2 = BASE_CAIP2;

/** Registers the scheme on an `x402Client` for x402 v1 (`base`, `eip155:8453`) and v2 (`eip155:8453`). */
export function registerIsocast<
  C extends {
    registerV1(n: string, s: SchemeNetworkClient): C;
    register(n: `${string}:${string}`, s: SchemeNetworkClient): C;
  },
>(client: C, scheme: IsocastExactScheme): C {
  for (const network of ISOCAST_NETWORKS) client.registerV1(network, scheme);
  return client.register(ISOCAST_NETWORK_V2, scheme);
}

export type IsocastSchemeOptions = {
  /** The settlement wallet you expect to pay (GET /v1/signals/meta `payTo`); recommended. */
  payTo?: string;
  /** USDC contract; Base's canonical USDC unless you test against a token of your own. */
  usdc?: string;
  /** Authorization lifetime in seconds (capped by the challenge). */
  validForSeconds?: number;
  now?: () => number;
  /**
   * An x402 `payment-identifier` id for each v2 payment (payment-id.ts), sent when the 402
   * declares the extension: e.g. `() => newPaymentId()`. Called once per payment; a new
   * authorization needs a new id (the same id with another payment answers 409).
   */
  paymentId?: () => string;
};

export class IsocastExactScheme implements SchemeNetworkClient {
  readonly scheme = 'exact';
  readonly #account: SignableAccount;
  readonly #opts: IsocastSchemeOptions;

  constructor(account: SignableAccount, opts: IsocastSchemeOptions = {}) {
    this.#account = account;
    this.#opts = opts;
  }

  /** Lets the stock client's spend controls price USDC on Base in dollars (6 decimals). */
  findDefaultAsset: FindDefaultAsset = (asset, network) => {
    const usdc = (this.#opts.usdc ?? BASE_USDC).toLowerCase();
    return BASE_ALIASES.includes(network) && asset.toLowerCase() === usdc
      ? { asset, decimals: 6, symbol: 'USDC' }
      : undefined;
  };

  async createPaymentPayload(
    x402Version: number,
    requirements: PaymentRequirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    if (x402Version !== 1 && x402Version !== 2)
      throw new ChallengeRefused(`isocast pays x402 v1 and v2 challenges, not v${x402Version}`);
    // x402 v1 requirements carry maxAmountRequired; v2 names it amount. The checks read v1's name.
    const accept = (x402Version === 1
      ? requirements
      : { ...requirements, maxAmountRequired: requirements.amount }) as unknown as Accept;
    const binding = bindingOf(accept);
    if (!binding) throw new ChallengeRefused('the challenge carries no extra.binding; cannot bind the nonce');
    const cap = context?.maxAmountPerPayment;
    const expect: Expectations = {
      ...(this.#opts.payTo ? { payTo: this.#opts.payTo as Address } : {}),
      ...(this.#opts.usdc ? { usdc: this.#opts.usdc } : {}),
      ...(cap !== undefined && /^\d+$/.test(cap) ? { maxAtomic: BigInt(cap), capName: 'spend-control cap' } : {}),
    };
    const signed = await signExact(
      this.#account,
      { body: requirements, accept, binding, echoSalt: x402Version === 1 && binding.saltEcho === 'payload.salt' },
      { expect, nowMs: this.#opts.now?.(), validForSeconds: this.#opts.validForSeconds },
    );
    // v2: the client wraps this with `accepted` (these requirements, extra.binding included) and
    // merges these extensions into the server's declarations (the id joins its `info`).
    if (x402Version === 2) {
      const id = context?.extensions?.[PAYMENT_IDENTIFIER] && this.#opts.paymentId?.();
      if (id === undefined || id === '') return { x402Version: 2, payload: signed.payload };
      if (!isValidPaymentId(id))
        throw new ChallengeRefused('paymentId must be 16-128 characters of A-Z, a-z, 0-9, - and _');
      return { x402Version: 2, payload: signed.payload, extensions: { [PAYMENT_IDENTIFIER]: { info: { id } } } };
    }
    // v1: the client sends this object as the PaymentPayload, so it carries scheme and network.
    const v1 = { x402Version: 1, scheme: this.scheme, network: accept.network as string, payload: signed.payload };
    return v1;
  }
}
