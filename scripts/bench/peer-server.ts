/**
 * The reference x402 stack a seller would pick instead of isocast: a Hono app on
 * `@hono/node-server` with `@x402/hono`'s payment middleware (`@x402/core` resource server,
 * `@x402/evm` exact scheme) guarding one paid GET, settling through the same fake facilitator.
 * The body is a JSON document of the given size (isocast's subscribe answer, measured in the
 * same run), encoded once. Its middleware verifies through the facilitator's `/verify`, runs the
 * handler, then settles through `/settle`; it does no local signature check, no sanctions
 * screening, no binding and keeps no record, which is what isocast is compared against.
 *
 * node scripts/bench/peer-server.ts '{"port":9200,"facilitatorUrl":"http://127.0.0.1:9100","payTo":"0x…","bodyBytes":600}'
 */
import { serve } from '@hono/node-server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { PEER_PATH } from './peer-path.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as {
  port: number;
  facilitatorUrl: string;
  payTo: string;
  bodyBytes: number;
  price?: string;
};

// A JSON object padded to exactly bodyBytes with a filler string.
const skeleton = (fill: string) => JSON.stringify({ ok: true, filler: fill });
const body = Buffer.from(skeleton('x'.repeat(Math.max(0, input.bodyBytes - skeleton('').length))));

const facilitator = new HTTPFacilitatorClient({ url: input.facilitatorUrl });
const resourceServer = new x402ResourceServer(facilitator).register('eip155:8453', new ExactEvmScheme());
const app = new Hono();
app.get('/health', (c) => c.text('ok'));
app.use(
  paymentMiddleware(
    {
      [`GET ${PEER_PATH}`]: {
        accepts: { scheme: 'exact', price: input.price ?? '$0.02', network: 'eip155:8453', payTo: input.payTo },
        description: "bench: the reference stack's paid GET",
      },
    },
    resourceServer,
  ),
);
app.get(
  PEER_PATH,
  () =>
    new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } }),
);
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: input.port });
process.on('SIGTERM', () => process.exit(0));
