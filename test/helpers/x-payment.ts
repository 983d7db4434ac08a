import type { Hex } from 'viem';
import { authorizationJson, NETWORK, type Authorization } from '../../src/x402/networks.ts';
import type { PaymentPayloadV1 } from '../../src/x402/x-payment.ts';

/** An X-Payment header for a signed authorization, as a v1 buyer sends it; `network` defaults to Base's v1 name. */
export function encodeXPayment(
  signature: Hex,
  auth: Authorization,
  { network = NETWORK }: { network?: string } = {},
): string {
  const payload: PaymentPayloadV1 = {
    x402Version: 1,
    scheme: 'exact',
    network,
    payload: { signature, authorization: authorizationJson(auth) },
  };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}
