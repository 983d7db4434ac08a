import { authorizationJson, type Authorization } from './networks.ts';
import { requirementsV2, resourceV2 } from './v2.ts';
import type { PaymentRequirementsV1 } from './x-payment.ts';

/** What a settle call carries: the verified authorization, our requirements, the route's listing. */
type SettleWire = {
  authorization: Authorization;
  signature: string;
  requirements: PaymentRequirementsV1;
  listing?: { description: string; extensions: Record<string, unknown> } | null;
};

/**
 * What a facilitator is sent for `/verify` and `/settle`, in the (x402Version, scheme, network)
 * it listed (negotiate.ts). Built from the verified authorization and our standard requirements,
 * never from the buyer's header as received: the wire format a facilitator reads does not depend
 * on which x402 version or network spelling the buyer paid with, and nothing of isocast's own
 * (the echoed salt, the binding) can reach it.
 *
 * v1 (x402 1.x, `@x402/core`'s `registerV1`): `{x402Version: 1, paymentPayload: {x402Version,
 * scheme, network, payload}, paymentRequirements: {…, maxAmountRequired, resource, description,
 * mimeType}}`. v2 (`@x402/core` 2.x): `{x402Version: 2, paymentPayload: {x402Version, resource:
 * {url, description, mimeType}, accepted, payload}, paymentRequirements}`, where the requirements
 * carry `amount` and `accepted` is the same requirements object the payload answers. A v2 settle
 * also carries the route's Bazaar listing (`resource.description`, `extensions.bazaar`,
 * bazaar.ts): a cataloguing facilitator lists a resource from exactly these fields.
 */
export type WireKind = { x402Version: 1 | 2; scheme: 'exact'; network: string };

export function facilitatorBody(kind: WireKind, req: SettleWire): Record<string, unknown> {
  const payload = { signature: req.signature, authorization: authorizationJson(req.authorization) };
  const r = req.requirements;
  if (kind.x402Version === 1) {
    return {
      x402Version: 1,
      paymentPayload: { x402Version: 1, scheme: kind.scheme, network: kind.network, payload },
      paymentRequirements: { ...r, network: kind.network },
    };
  }
  const accepted = requirementsV2(r, kind.network);
  const listing = req.listing;
  return {
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      resource: resourceV2(r, listing?.description),
      accepted,
      payload,
      ...(listing ? { extensions: listing.extensions } : {}),
    },
    paymentRequirements: accepted,
  };
}
